#ifndef NOTES_TERMINATION_H
#define NOTES_TERMINATION_H

#include <sys/types.h>

/// Until `notes_forget_on_termination`, makes SIGHUP (the terminal closed) and SIGTERM remove
/// the file at `path` (a note's text written for an editor), send the same signal to the child
/// `notes_terminate_child_too` names, and end the process with exit code 128 + the signal,
/// instead of leaving the file behind. SIGINT and SIGQUIT are ignored meanwhile: a terminal sends
/// them to the editor too, which decides (an editor that ends by one is reported as failing, and
/// the file is removed then). The path is copied; the handler only calls unlink(2), kill(2) and
/// _exit(2), which are safe in a signal handler. Returns 0, or -1 if the path is too long.
int notes_remove_on_termination(const char *path);

/// The editor's process, which the handler passes the signal on to (0: none).
void notes_terminate_child_too(pid_t child);

/// Restores the dispositions `notes_remove_on_termination` replaced; the file is the caller's
/// again.
void notes_forget_on_termination(void);

#endif

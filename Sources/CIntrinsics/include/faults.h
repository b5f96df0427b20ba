#ifndef NOTES_FAULTS_H
#define NOTES_FAULTS_H

/// Makes SIGSEGV, SIGBUS and SIGABRT (LMDB's assertions) end the process with `message`, the
/// signal's name and exit code `code` instead of a bare crash: LMDB trusts the pages of its file,
/// so damage to them can fault inside it. The message is copied; the handler only calls
/// write(2) and _exit(2), which are safe in a signal handler, on an alternate stack (so a stack
/// overflow is reported too). For the command-line programs only, never for a library's host.
void notes_install_fault_handlers(const char *message, int code);

/// Makes a SIGABRT under a limit on address space (`ulimit -v`), where it is most likely an
/// allocation that failed, end the process with `message` and `code` instead.
void notes_set_memory_fault_message(const char *message, int code);

#endif

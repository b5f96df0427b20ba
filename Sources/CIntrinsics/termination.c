#include "termination.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static char termination_path[4096];
static volatile sig_atomic_t termination_armed;
static volatile pid_t termination_child;
static struct sigaction previous_hup, previous_term, previous_int, previous_quit;

static void on_termination(int sig) {
    if (termination_armed) unlink(termination_path);
    if (termination_child > 0) kill(termination_child, sig);
    _exit(128 + sig);
}

int notes_remove_on_termination(const char *path) {
    size_t length = strlen(path);
    if (length >= sizeof termination_path) return -1;
    memcpy(termination_path, path, length + 1);
    termination_child = 0;
    termination_armed = 1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_termination;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGHUP);
    sigaddset(&action.sa_mask, SIGTERM);
    sigaction(SIGHUP, &action, &previous_hup);
    sigaction(SIGTERM, &action, &previous_term);
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &previous_int);
    sigaction(SIGQUIT, &ignore, &previous_quit);
    return 0;
}

void notes_terminate_child_too(pid_t child) { termination_child = child; }

void notes_forget_on_termination(void) {
    sigaction(SIGHUP, &previous_hup, NULL);
    sigaction(SIGTERM, &previous_term, NULL);
    sigaction(SIGINT, &previous_int, NULL);
    sigaction(SIGQUIT, &previous_quit, NULL);
    termination_child = 0;
    termination_armed = 0;
}

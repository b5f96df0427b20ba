#include "faults.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fault_message[512];
static size_t fault_length;
static int fault_code = 5;

static void write_all(const char *text, size_t count) {
    while (count > 0) {
        ssize_t n = write(2, text, count);
        if (n <= 0) return;
        text += n;
        count -= (size_t)n;
    }
}

static void on_fault(int sig) {
    const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "SIGABRT";
    write_all(fault_message, fault_length);
    write_all(" (", 2);
    write_all(name, strlen(name));
    write_all(")\n", 2);
    _exit(fault_code);
}

void notes_install_fault_handlers(const char *message, int code) {
    fault_length = strlen(message);
    if (fault_length >= sizeof fault_message) fault_length = sizeof fault_message - 1;
    memcpy(fault_message, message, fault_length);
    fault_code = code;
    static char stack[1 << 16];
    stack_t alternate = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&alternate, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_fault;
    action.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
    sigaction(SIGABRT, &action, NULL);
}

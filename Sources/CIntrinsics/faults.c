#include "faults.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char fault_message[512];
static size_t fault_length;
static int fault_code = 5;
static char memory_message[512];
static size_t memory_length;
static int memory_code = 1;

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
    /* Under a limit on address space (ulimit -v) an abort is most likely the Swift runtime's
       "failed to allocate" (malloc returns NULL there; without a limit the kernel's OOM killer
       sends SIGKILL instead), not damage: getrlimit(2) is a plain system call. */
    struct rlimit limit;
    if (sig == SIGABRT && memory_length > 0 && getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        write_all(memory_message, memory_length);
        write_all(" (SIGABRT)\n", 11);
        _exit(memory_code);
    }
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

void notes_set_memory_fault_message(const char *message, int code) {
    memory_length = strlen(message);
    if (memory_length >= sizeof memory_message) memory_length = sizeof memory_message - 1;
    memcpy(memory_message, message, memory_length);
    memory_code = code;
}

/* process.c — the one instance of the process's mutable state (process.h). */
#include "process.h"

process_state_t process_state;

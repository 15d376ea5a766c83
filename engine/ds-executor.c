/* ds-executor.c: (in progress) */

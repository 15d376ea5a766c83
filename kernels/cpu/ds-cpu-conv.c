/* ds-cpu-conv.c: (in progress) */

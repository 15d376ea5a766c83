/* ds-params.c: (in progress) */

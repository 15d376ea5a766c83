/* ds-ops-common.c: (in progress) */

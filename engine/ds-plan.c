/* ds-plan.c: (in progress) */

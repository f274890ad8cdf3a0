#!/bin/sh
# scripts/vm.sh KDIR CMD: the VM runner (scripts/harness/vm.py, which says
# how it runs a guest and its settings) for the shell scripts that boot one.
PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m harness.vm "$@"

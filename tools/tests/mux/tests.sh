# The multiplexing error estimate (lib/estimate.c) and the SLICES read
# format: a suite of tests/events/run-tests.sh, which sources it with
# tests/tap.sh.  The simulation's coverage lines (# ...) are the numbers
# Documentation/multiplexing.rst quotes.  Environment: OUT (build dir).

run_binary test_estimate

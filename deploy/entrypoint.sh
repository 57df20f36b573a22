#!/bin/sh
# Container entry point: migrate the database, then replace this shell with the bot so
# the bot itself receives SIGTERM (docker stop, Kubernetes pod termination) and stops
# cleanly.
#
#   docker run IMAGE                 -> trendbot db upgrade; trendbot run
#   docker run IMAGE poll            -> trendbot db upgrade; trendbot poll
#   docker run IMAGE trendbot poll   -> the same
set -eu

if [ "${1:-}" = "trendbot" ]; then
    shift
fi
if [ "$#" -eq 0 ]; then
    set -- run
fi

trendbot db upgrade
exec trendbot "$@"

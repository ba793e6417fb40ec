#!/usr/bin/env bash
# Builds hubprobe's image with ko, which needs no Docker engine, and pushes it
# to $KO_DOCKER_REPO (e.g. ghcr.io/you/hubprobe). .ko.yaml holds the base image
# and the build flags; $VERSION (default dev) is what `hubprobe --version`
# prints. Further arguments go to ko build, e.g. --platform=linux/amd64,linux/arm64
# or --tags=v1.2.3. The deploy tests build with this script too.
#
# The user is set here because .ko.yaml has no key for it. It is numeric, so
# that the kubelet can enforce runAsNonRoot, and the Dockerfile's USER.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KO_DOCKER_REPO:?set KO_DOCKER_REPO to the repository to push the image to}"
ko=$(command -v ko || echo "$(go env GOPATH)/bin/ko")
exec "$ko" build --bare --image-user=65532:65532 "$@" ./cmd/hubprobe

# The mongobench image: one static binary for the operator and its runner Jobs, from scratch,
# run as a non-root user, with no shell. Both platforms, with a container engine:
#
#   version=$(cargo pkgid -p mongobench | sed 's/.*[@#]//')   # the tag is the crate version
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     -t "ghcr.io/mongobench/mongobench:$version" --push .
#
# A foreign platform's build stage runs under the engine's emulation, slowly. image/build builds
# the same image without a container engine; image/test checks that its user, entrypoint and
# PATH are the ones below.

# Alpine's Rust is musl's, which links statically; the C of ring, zstd and mimalloc needs gcc.
FROM rust:1.95-alpine AS build
RUN apk add --no-cache gcc musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin mongobench \
 && install -D -m 0755 target/release/mongobench /out/usr/local/bin/mongobench

FROM scratch
COPY --from=build /out/ /
# Kubernetes' `command: [mongobench]` (the operator's Deployment, the runner Jobs) is looked up on PATH.
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mongobench"]

# The gpulint container image (docs/install.md): a static musl gpulint on distroless/static,
# which has CA certificates (for --prometheus https://...) and a non-root user, and no shell.
#
#   docker build -t gpulint .                     # gpulint only
#   docker build --target helm -t gpulint:helm .  # gpulint and helm (for Helm charts)
#   docker run --rm -v "$PWD:/repo" gpulint /repo
#
# The build runs natively on each platform (buildx --platform linux/amd64,linux/arm64).

FROM rust:1.95-slim-bookworm AS build
# libgit2 (git2) is C: musl-gcc compiles it for the static musl target.
RUN apt-get update \
    && apt-get install -y --no-install-recommends musl-tools=1.2.3-1 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY rules rules
COPY src src
RUN target="$(uname -m)-unknown-linux-musl" \
    && rustup target add "$target" \
    && CC=musl-gcc cargo build --locked --release --bin gpulint --target "$target" \
    && cp "target/$target/release/gpulint" /gpulint

FROM gcr.io/distroless/static-debian12:nonroot AS gpulint
COPY --from=build /gpulint /usr/local/bin/gpulint
WORKDIR /repo
ENTRYPOINT ["/usr/local/bin/gpulint"]

# With helm (a static Go binary) for repositories with Helm charts: gpulint:VERSION-helm.
FROM alpine/helm:3.17.3 AS helm-bin

FROM gpulint AS helm
COPY --from=helm-bin /usr/bin/helm /usr/local/bin/helm

# The default target is the image without helm.
FROM gpulint

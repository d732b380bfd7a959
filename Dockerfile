# sluice in a container image for linux/amd64 and linux/arm64, run as a non-root user.
#
# sluice listens on 127.0.0.1 only, by design, and a container's loopback is its own: publishing a
# port (-p 8080:8080) cannot reach it. Put the tools that use it in the same network namespace:
#   docker run -d --name sluice --restart unless-stopped --network host -v sluice:/data IMAGE
#       (Linux: the container shares the host's loopback, so tools on the host use 127.0.0.1:8080)
#   docker run --network container:sluice SOME-AI-TOOL-IMAGE
#       (a tool in another container, beside it; in Kubernetes, sluice as a sidecar in the tool's pod)
# Configuration and data live in /data (SLUICE_HOME): mount a volume there.
#
# The binary is build.ts's, compiled on the build machine for the image's architecture.
FROM --platform=$BUILDPLATFORM oven/bun:1.4.4 AS build
ARG TARGETARCH
ARG SLUICE_GIT_COMMIT=unknown
WORKDIR /src
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN case "$TARGETARCH" in \
      amd64) triple=x86_64-unknown-linux-gnu ;; \
      arm64) triple=aarch64-unknown-linux-gnu ;; \
      *) echo "no sluice build for $TARGETARCH" >&2; exit 1 ;; \
    esac \
 && SLUICE_GIT_COMMIT="$SLUICE_GIT_COMMIT" bun build.ts --target "$triple" --outdir /out \
 && mv "/out/sluice-$triple" /out/sluice \
 && mkdir /out/data

# glibc and CA certificates, no shell, user "nonroot" (65532).
FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/sluice /usr/local/bin/sluice
COPY --from=build --chown=65532:65532 /out/data /data
ENV SLUICE_HOME=/data
VOLUME /data
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/sluice"]
CMD ["serve"]

# FitBase in a container: the Swift toolchain image builds the release binary (static Swift runtime), a slim Debian
# image runs it as a non-root user with its data in /data. The build stage runs scripts/build-release.sh, the same
# script CI and a machine without Docker run, so both build the same thing.
#
#   docker build -t fitbase .
#   openssl rand -base64 32 > fitbase-master-key   # once; keep it in a secret store, apart from the volume
#   docker run -p 8080:8080 -v fitbase-data:/data -e FITBASE_MAIL=log -e FITBASE_MASTER_KEY="$(cat fitbase-master-key)" fitbase
#
# Settings are FITBASE_* environment variables (docs/configuration.md); give every instance the same
# FITBASE_MASTER_KEY. The container listens on 0.0.0.0, so without one it refuses to start rather than write a key
# file into /data beside the data it protects; -e FITBASE_ALLOW_GENERATED_MASTER_KEY=true allows that for a trial.

FROM swift:6.3-bookworm AS build
WORKDIR /src
# The build's own checks (the smoke test) use curl and python3.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl python3 && rm -rf /var/lib/apt/lists/*
COPY . .
RUN scripts/build-release.sh /staging

FROM debian:bookworm-slim
# ca-certificates: Apple, Google, Stripe, SMTP and APNs over TLS; tzdata: users' time zones; curl: the health check;
# libturbojpeg0, libpng16-16 and libheif1: profile photo thumbnails (loaded at run time; without them none are made).
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends ca-certificates tzdata curl libturbojpeg0 libpng16-16 libheif1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin fitbase \
    && mkdir -p /data && chown fitbase:fitbase /data && chmod 700 /data
COPY --from=build /staging /opt/fitbase
ENV FITBASE_HOST=0.0.0.0 \
    FITBASE_PORT=8080 \
    FITBASE_DATA_DIR=/data
USER fitbase
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS "http://127.0.0.1:${FITBASE_PORT}/readyz" >/dev/null || exit 1
ENTRYPOINT ["/opt/fitbase/fitbase"]
CMD ["serve"]

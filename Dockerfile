# drip as a container: a static binary on a distroless base, run as a
# non-root user, with the embedded SQLite database on a volume.
#
#   docker build -t drip --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) .
#   docker run -p 8080:8080 -v drip-data:/data drip
#   docker run ... drip serve --database-url postgres://... --redis-url redis://...
#
# Every flag of `drip serve` is also a DRIP_* environment variable
# (--redis-url is DRIP_REDIS_URL); see `drip serve --help`.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# A static binary (pure-Go SQLite driver: no cgo). Its version comes from
# the build arguments (docker build --build-arg VERSION=v1.2.3 --build-arg
# COMMIT=$(git rev-parse HEAD) ...), else from .git when the context has it.
ARG VERSION="" COMMIT="" DATE=""
RUN CGO_ENABLED=0 go build -trimpath -o /out/drip -ldflags="-s -w \
      ${VERSION:+-X github.com/dripfaucet/drip/internal/version.version=$VERSION} \
      ${COMMIT:+-X github.com/dripfaucet/drip/internal/version.commit=$COMMIT} \
      ${DATE:+-X github.com/dripfaucet/drip/internal/version.date=$DATE}" ./cmd/drip \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/drip /usr/local/bin/drip
# The data directory belongs to the image's non-root user (65532), 0700 as
# drip wants it.
COPY --from=build --chown=65532:65532 --chmod=0700 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 8080
ENV DRIP_DATA_DIR=/data DRIP_LISTEN=0.0.0.0:8080
# Liveness: GET /healthz; readiness: GET /readyz (503 while the database is
# down). The base image has no shell or curl: probe from the orchestrator.
ENTRYPOINT ["/usr/local/bin/drip"]
CMD ["serve"]

# The quiver binary in a small image: built static in a Go image, run as a
# non-root user on a distroless base (no shell, no package manager).
#   docker build -t quiverdb/quiver .
#   docker run quiverdb/quiver scheduler --bind 0.0.0.0:50050 --rest 0.0.0.0:8080
# docs/deploy.md walks through Docker Compose and Kubernetes.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so that a change to the code reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/quiver ./cmd/quiver \
 && mkdir -p /out/work

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/quiver /usr/local/bin/quiver
# The executors' default work dir, owned by the image's non-root user.
COPY --from=build --chown=65532:65532 /out/work /var/lib/quiver
USER 65532:65532
# scheduler gRPC, scheduler REST/UI/metrics, executor gRPC+Flight, executor metrics
EXPOSE 50050 8080 50051 9090
ENTRYPOINT ["/usr/local/bin/quiver"]
CMD ["scheduler", "--bind", "0.0.0.0:50050", "--rest", "0.0.0.0:8080"]

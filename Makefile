# lockbench: `make bench` (the main job) and `make test`. Both install
# redis-server (and redis-sentinel, gcc) with apt-get when missing and root.
GO      ?= go
BIN     := bin/lockbench
OUT     ?= lockbench-out/bench
PROFILE ?= ci

.PHONY: bench test build deps deps-test vet clean docker-image

bench: deps build
	./$(BIN) bench -v --profile $(PROFILE) --out $(OUT)

test: deps-test vet
	$(GO) test -count=1 -timeout 9m ./...

build:
	$(GO) build -o $(BIN) ./cmd/lockbench

deps:
	@./scripts/deps.sh

# make test also needs chromium (the report test renders index.html headless).
deps-test:
	@./scripts/deps.sh --browser

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet ./...

# The docker backend's local image (no registry needed): FROM scratch with
# this machine's redis-server and the libraries ldd lists for it.
docker-image:
	$(GO) run ./scripts/dockerimage -tag lockbench/redis:local

clean:
	rm -rf bin lockbench-out

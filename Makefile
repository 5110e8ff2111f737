# tdsextract: the two set-up commands are `make demo` and `make test`.
GO        ?= go
BIN       ?= bin/tdsextract
PKGS      ?= ./...
FUZZTIME  ?= 10m
# make test fuzzes the secrecy of connection-string errors this long.
FUZZTIME_SHORT ?= 10s
# The default test run must stay well under 15 minutes on 2 cores.
TESTFLAGS ?= -count=1 -timeout 20m
# Where users run tdsextract besides linux/amd64: make test type-checks
# every package and test for each (go vet, no test run: seconds with a
# warm build cache, about 2 minutes each from a cold one, as in a clean
# clone, since every dependency is compiled for the target). Windows has no metered sockets (see
# engine/session/metered_other.go), arm64 takes the scalar UTF-16 decoder
# instead of the amd64 assembly, 386 has a 32-bit int.
CROSS     ?= windows/amd64 darwin/arm64 linux/arm64 linux/386
# Stamped into the binary: `tdsextract version` and `--version` print them.
# (`go install module@version` gets the same from the module's build info.)
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   ?= -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build plugins test soak demo bench fuzz lint vet fmt clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tdsextract

# The example sink plugins (plugins/README.md), ready for --plugins-dir bin/plugins.
plugins:
	$(GO) build -o bin/plugins/jsonl ./plugins/examples/jsonl
	$(GO) build -o bin/plugins/arrowipc ./plugins/examples/arrowipc

# Unit, integration (test TDS server, go-mssqldb, FreeTDS, PostgreSQL 15) and
# allocation tests, then every benchmark once so none rots.
test:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	# go.mod lists what the code imports, direct dependencies as direct.
	$(GO) mod tidy -diff
	$(GO) vet $(PKGS)
	@for t in $(CROSS); do \
	  echo "GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $(PKGS)"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $(PKGS) || exit 1; \
	done
	$(GO) test $(TESTFLAGS) -bench . -benchtime 1x $(PKGS)
	# No connection-string error may quote the string (it holds passwords):
	# a short fuzz run here, FUZZTIME under make fuzz.
	$(GO) test ./engine/session -run '^$$' -fuzz '^FuzzConnStringNeverEchoes$$' -fuzztime $(FUZZTIME_SHORT)

# Partitioned exports with a fault injected at a random row (connection
# dropped, malformed row, stall past the deadline) SOAK_RUNS times, each
# resumed and compared with an uninterrupted run (make test runs 5).
# SOAK_SEED=N repeats a run's random choices. Then a partitioned export of
# SOAK_KILL_ROWS rows killed with SIGKILL part way and resumed, compared
# with an uninterrupted run (make test runs it at 20,000 rows).
SOAK_RUNS ?= 100
SOAK_KILL_ROWS ?= 20000000
soak:
	SOAK_RUNS=$(SOAK_RUNS) $(GO) test ./engine -run '^TestSoakRandomFaults$$' -count=1 -timeout 60m -v
	SOAK_KILL_ROWS=$(SOAK_KILL_ROWS) $(GO) test ./cmd/tdsextract -run '^TestSoakKilledPartitionedRunResumes$$' -count=1 -timeout 60m -v

# Starts the built-in sample server, exports sample tables to ./out and
# prints the run summary.
demo: build
	$(BIN) demo --out out

# The standard benchmark set (A/B harness; writes bench/results/latest.json),
# then the plugin boundary (bench/results/plugins.json).
bench: build
	$(GO) run ./bench -out bench/results/latest.json
	$(GO) run ./bench -suite plugins

# Long fuzzing, one target at a time, FUZZTIME each. -timeout 0: go test's
# default 10-minute timeout would otherwise end a 10-minute run as a failure.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -timeout 0 || exit 1; \
	  done; \
	done

# staticcheck at a fixed version, fetched through the module proxy on
# first use: unused code, deprecated APIs and simplifications.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: vet
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) run $(STATICCHECK) ./...

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

clean:
	rm -rf bin out

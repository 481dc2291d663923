# Sift — see README.md. Every target works with only Go installed.
GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 20s
BENCHTIME ?= 1x
GOVULNDB  ?= https://vuln.go.dev
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# The Weaviate release the Weaviate store's tests run (internal/weaviatetest
# pins the same one), installed with go install into a cache outside the repo.
WEAVIATE_VERSION := v1.39.0
WEAVIATE_CACHE   ?= $(or $(SIFT_WEAVIATE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sift/weaviate)
# The Lighthouse release `make lighthouse` runs, installed with npm into a
# cache outside the repo; it drives the installed Chromium (CHROMIUM).
NPM                ?= npm
LIGHTHOUSE_VERSION := 12.2.3
LIGHTHOUSE_CACHE   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sift/lighthouse
LIGHTHOUSE_DIR     := $(LIGHTHOUSE_CACHE)/$(LIGHTHOUSE_VERSION)

.PHONY: weaviate-server run build test test-short vet lint fmt-check tidy-check bench bench-quick eval fuzz lighthouse hooks clean

## run: start the service on its embedded defaults with demo content and dev credentials
run:
	@echo "Building sift (the first build fetches modules and compiles for a minute or two)…"
	@$(GO) build -ldflags "$(LDFLAGS)" -o bin/sift ./cmd/sift
	@echo "Dev credentials (override with the environment):"
	@echo "  Basic Auth:  ADMIN_USER=$${ADMIN_USER:-admin} ADMIN_PASSWORD=$${ADMIN_PASSWORD:-sift-dev}"
	@echo "  Bearer:      API_SECRET_KEY=$${API_SECRET_KEY:-sift-dev-key}"
	ADMIN_USER=$${ADMIN_USER:-admin} ADMIN_PASSWORD=$${ADMIN_PASSWORD:-sift-dev} \
	API_SECRET_KEY=$${API_SECRET_KEY:-sift-dev-key} \
	./bin/sift serve --demo

## build: build bin/sift
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/sift ./cmd/sift

## test: vet, formatting, and every test with the race detector (includes the SIGKILL loop)
test: vet fmt-check weaviate-server
	SIFT_WEAVIATE_CACHE=$(WEAVIATE_CACHE) $(GO) test -race -count=1 -timeout 30m $(PKGS)

## weaviate-server: install the pinned weaviate-server for the tests when missing (once; minutes of CPU)
weaviate-server:
	@test -x $(WEAVIATE_CACHE)/$(WEAVIATE_VERSION)/weaviate-server || { \
	  echo "Installing weaviate-server $(WEAVIATE_VERSION) into $(WEAVIATE_CACHE) (once; a few minutes)…"; \
	  cd $${TMPDIR:-/tmp} && GOBIN=$(WEAVIATE_CACHE)/$(WEAVIATE_VERSION) GOFLAGS=-mod=mod \
	    $(GO) install github.com/weaviate/weaviate/cmd/weaviate-server@$(WEAVIATE_VERSION); }

## test-short: the quick subset, without the race detector
test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## lint: vet, staticcheck, formatting, module tidiness and govulncheck (GOVULNDB=file:///dir for a local database copy)
lint: vet fmt-check tidy-check
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)
	$(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db $(GOVULNDB) $(PKGS)

tidy-check:
	@cp go.mod /tmp/sift-go.mod.bak && cp go.sum /tmp/sift-go.sum.bak; \
	$(GO) mod tidy >/dev/null 2>&1; \
	if ! cmp -s go.mod /tmp/sift-go.mod.bak || ! cmp -s go.sum /tmp/sift-go.sum.bak; then \
	  cp /tmp/sift-go.mod.bak go.mod; cp /tmp/sift-go.sum.bak go.sum; echo "go.mod/go.sum are not tidy"; exit 1; fi

## lighthouse: Lighthouse accessibility, best practices and SEO (>= 95 each) on the demo's home, conversation, channel and document pages (installs lighthouse once with npm; needs Chromium)
lighthouse:
	@test -x $(LIGHTHOUSE_DIR)/node_modules/.bin/lighthouse || { \
	  echo "Installing lighthouse $(LIGHTHOUSE_VERSION) into $(LIGHTHOUSE_DIR) (once)…"; \
	  mkdir -p $(LIGHTHOUSE_DIR) && $(NPM) i -E --no-audit --no-fund --prefix $(LIGHTHOUSE_DIR) lighthouse@$(LIGHTHOUSE_VERSION); }
	SIFT_LIGHTHOUSE=$(LIGHTHOUSE_DIR)/node_modules/.bin/lighthouse $(GO) test -count=1 -timeout 20m -run '^TestLighthouse$$' -v ./cmd/sift

## bench: every benchmark (bench/ and next to the code); 1M-message suites take minutes
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 120m ./...

## bench-quick: the benchmarks at their smallest sizes
bench-quick:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -short ./...

## eval: relevance (nDCG@10, recall@100, MRR@10) on every dataset in ../shared/datasets
eval:
	$(GO) run ./bench/cmd/eval

## fuzz: run each fuzz target for FUZZTIME
# A target that fails only with the fuzzer's own "context deadline exceeded"
# at the end of its time (a Go toolchain flake; no failing input is written)
# runs once more; any other failure stops the run.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg > /tmp/sift-fuzz.$$$$.log 2>&1; then \
	      cat /tmp/sift-fuzz.$$$$.log; \
	      if grep -q 'context deadline exceeded' /tmp/sift-fuzz.$$$$.log && ! grep -q 'Failing input written' /tmp/sift-fuzz.$$$$.log; then \
	        echo "== $$pkg $$f again (the fuzzer's deadline flake)"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	      else rm -f /tmp/sift-fuzz.$$$$.log; exit 1; fi; \
	    else tail -n 3 /tmp/sift-fuzz.$$$$.log; fi; \
	    rm -f /tmp/sift-fuzz.$$$$.log; \
	  done; \
	done

## hooks: use the repository's git hooks (.githooks): commit-msg refuses subjects over 72 characters
hooks:
	git config core.hooksPath .githooks

clean:
	rm -rf bin data

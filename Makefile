# The two commands of the README. Both install what is missing, then build.
#   make run    installs only what building and running need (scripts/install-deps.sh run),
#               builds the two programs and runs a local benchmark
#   make test   installs the test tools as well (scripts/install-deps.sh test), builds
#               everything and runs every test
#   make deb    builds the stormark and stormark-agent Debian packages into $(BUILD_DIR)/deb
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps deps-build deps-run deps-test configure-tests build binaries run test deb clean

all: build

deps: deps-test

deps-build:
	@bash scripts/install-deps.sh build

deps-run:
	@bash scripts/install-deps.sh run

deps-test:
	@bash scripts/install-deps.sh test

# A first configure without the test set installed leaves the tests out (GoogleTest is a test
# package); `make test` switches them on.
$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DSTORMARK_TESTS=OFF $(CMAKE_FLAGS)

configure-tests: deps-test
	cmake -S . -B $(BUILD_DIR) -DSTORMARK_TESTS=ON $(CMAKE_FLAGS)

build: configure-tests
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the two programs: what `make run` needs, without compiling the tests.
binaries: deps-run
	@$(MAKE) --no-print-directory $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target stormark stormark-agent

# A local benchmark: the controller starts its own agent on a temporary directory.
run: binaries
	$(BUILD_DIR)/bin/stormark run $(ARGS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The two .deb packages (CPack; dependencies from dpkg-shlibdeps).
deb: deps-build
	@$(MAKE) --no-print-directory $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS) --target stormark stormark-agent stormark-man
	cd $(BUILD_DIR) && cpack -G DEB -B deb

clean:
	rm -rf $(BUILD_DIR)

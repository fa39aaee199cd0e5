// Test infrastructure only: the floor program of tests/bench/side_by_side.sh (never shipped).
module vmop.test/benchfloor

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/vmware/govmomi v0.56.0
)

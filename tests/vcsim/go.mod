// Test infrastructure only: the vCenter simulator launcher for vmop's tests (never shipped).
module vmop.test/vcsim

go 1.26.0

require github.com/vmware/govmomi v0.56.0

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

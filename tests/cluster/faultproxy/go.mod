// Test infrastructure only: the fault-injecting proxy in front of the real kube-apiserver of the
// tests (README.md). Standard library only: no requires.
module vmop.test/cluster/faultproxy

go 1.26.0

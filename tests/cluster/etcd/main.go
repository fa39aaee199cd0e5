// Command etcd is etcd's own server main, built from the module version pinned in go.mod (test
// infrastructure: the real Kubernetes control plane in tests/cluster). etcd's server module has
// local replace lines, so `go install` of it is refused; this wrapper builds the same main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }

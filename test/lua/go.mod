module planwarden.dev/lua-health

go 1.24.0

require (
	github.com/yuin/gopher-lua v1.1.1
	sigs.k8s.io/yaml v1.4.0
)

//go:build race

package sqlite

// raceBuild: the package's tests run under go test -race.
const raceBuild = true

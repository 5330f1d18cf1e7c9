//go:build race

package main

// raceBuild: under go test -race, the drip binary the end-to-end tests run
// is built with -race too, so that a data race in it (in serve's goroutines,
// say) ends it with exit status 66 and fails the test that stops it.
const raceBuild = true

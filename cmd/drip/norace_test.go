//go:build !race

package main

// raceBuild: see race_test.go.
const raceBuild = false

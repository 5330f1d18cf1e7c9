package notify

// BatchSize is batchSize, for the tests of package notify_test.
const BatchSize = batchSize

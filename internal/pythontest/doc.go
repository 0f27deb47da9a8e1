// Package pythontest holds the tests of scorekit's Python side, driven by go test as the
// Node example's are: the Python SDK (sdks/python) serving its examples (examples/python-*)
// as process plugins under the host's sandbox, their judge through the host's broker, their
// results against equivalent Go scorers on the corpus, their per-call cost against the Node
// and Go plugins, and the Python test suites (the SDK's test kit, the service's client and
// its pytest gate) run with pytest on Debian's python3 against the packages pip installs
// from the repository.
//
// Nothing is skipped: a missing python3 module fails with the command that installs it.
package pythontest

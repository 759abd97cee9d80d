/// The relay's version, for `rhea-relay --version` and the start-up banner. 0.x until the first
/// release; the minor number is the last issue resolved, so a report names what it ran.
enum RelayVersion {
    static let current = "0.28.0"
}

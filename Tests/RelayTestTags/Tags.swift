public import Testing

/// The tags `scripts/test` groups the suites by: a suite's tag says what it is, and so in which
/// run of `swift test` it goes.
extension Tag {
    /// The suite starts real peers — PostgreSQL, Synapse, the speech model, `rhea-relay`
    /// processes — or several relays on one store. It runs in the second group, beside the other
    /// such suites but not beside the tests that check real deadlines, which two loaded cores
    /// made miss them now and then.
    @Tag public static var peers: Self
    /// The suite must run with nothing beside it: it checks a deadline of the product's (Slack's
    /// 3 s) across a database restart, or counts a platform's rate limits as the fakes see sends
    /// arrive. Each such suite runs last, on its own.
    @Tag public static var alone: Self
}

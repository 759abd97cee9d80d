/// One decoder under fuzzing: its name, the real payloads its inputs are mutated from, and
/// what it does with one input — the same calls production makes on an untrusted body.
public struct FuzzTarget: Sendable {
    /// `slack.events`, `rhea.tribunal`…: what `--target` selects.
    public var name: String
    /// What it decodes, for `--list`.
    public var summary: String
    /// Real-shaped inputs (recorded Slack payloads, the Rhea contract's examples, OpenAI answers).
    public var seeds: [[UInt8]]
    /// Decodes one input; returns whether it was accepted (a clear error is a fine answer —
    /// only a trap is a failure, and a trap ends the process).
    public var run: @Sendable ([UInt8]) -> Bool

    public init(name: String, summary: String, seeds: [[UInt8]], run: @escaping @Sendable ([UInt8]) -> Bool) {
        self.name = name
        self.summary = summary
        self.seeds = seeds
        self.run = run
    }
}

/// What a fuzz run of one target did.
public struct FuzzReport: Sendable, Hashable {
    public var target: String
    public var inputs: Int
    /// Inputs the decoder accepted (the rest were refused with an error).
    public var accepted: Int
    /// Numbers `UntrustedNumber` replaced while decoding them.
    public var clamped: Int
    public var elapsed: Duration
}

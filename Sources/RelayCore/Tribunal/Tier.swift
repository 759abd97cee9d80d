/// How capable (and costly) a model should be. Chains escalate cheap → mid → frontier.
public enum Tier: String, Sendable, Hashable, CaseIterable, Codable {
    case cheap, mid, frontier

    /// The next tier up, or nil at the top.
    public var next: Tier? {
        switch self {
        case .cheap: .mid
        case .mid: .frontier
        case .frontier: nil
        }
    }
}

public import RelayCore

/// The mrkdwn texts of rendered Slack blocks, for the rendering tests and the output-safety
/// property tests (a target of their own).
extension JSONValue {
    /// Every mrkdwn text object in this block.
    public var mrkdwnObjects: [JSONValue] {
        switch self {
        case .object(let members):
            let own: [JSONValue] = members["type"] == "mrkdwn" ? [self] : []
            return own + members.values.flatMap(\.mrkdwnObjects)
        case .array(let items):
            return items.flatMap(\.mrkdwnObjects)
        default:
            return []
        }
    }

    public var mrkdwnTexts: [String] { mrkdwnObjects.compactMap { $0["text"]?.stringValue } }
}

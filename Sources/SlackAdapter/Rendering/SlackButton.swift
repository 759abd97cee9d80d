/// The buttons the renderer puts under replies, as they come back in `block_actions`.
public enum SlackButton: Sendable, Hashable {
    /// "Post to channel": `id` is what the caller passed to the renderer (an outbox entry id…).
    case postToChannel(id: String)
    /// "Run again" with this command line.
    case runAgain(commandLine: String)
    /// Some other element, or one of ours without its value.
    case other(actionID: String, value: String?)

    /// `action_id` of "Post to channel".
    public static let postToChannelActionID = "post_to_channel"
    /// `action_id` of "Run again".
    public static let runAgainActionID = "run_again"

    public init(_ action: SlackBlockAction) {
        switch (action.actionID, action.value) {
        case (Self.postToChannelActionID, .some(let value)) where !value.isEmpty:
            self = .postToChannel(id: value)
        case (Self.runAgainActionID, .some(let value)) where !value.isEmpty:
            self = .runAgain(commandLine: value)
        default:
            self = .other(actionID: action.actionID, value: action.value)
        }
    }
}

extension SlackBlockActions {
    /// The used elements, read as this adapter's buttons.
    public var buttons: [SlackButton] { actions.map(SlackButton.init) }
}

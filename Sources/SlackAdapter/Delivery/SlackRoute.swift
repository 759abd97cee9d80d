import Foundation

/// One way a new message can reach Slack, and the order they are tried in for each part of a
/// reply, after the edit of the run's placeholder (`chat.update`) that `Deliverer` tries first.
///
/// A part goes by the first route of its list that Slack accepts: a route Slack refuses by name
/// (`message_not_found`, `cant_update_message`, `not_in_channel`, `used_url`, `expired_url`…)
/// hands the part to the next one, so a public result is lost only when every route is refused.
/// A passing failure (429, 5xx, a timeout) stops there: the outbox retries the same part later.
enum SlackRoute: Sendable, Hashable {
    /// The slash command's or button's `response_url`.
    case responseURL(SlackResponseType, replaceOriginal: Bool)
    /// `chat.postMessage`, in `threadTS` when given.
    case postMessage(threadTS: String?)
    /// `chat.postEphemeral` to the person who asked.
    case postEphemeral(threadTS: String?)

    /// What the sender knows when it picks the routes of one part.
    struct Situation: Sendable {
        var address: SlackAddress
        /// Which part (from 0) is to go.
        var part: Int
        /// The message id the entry's earlier parts recorded (the first part's), if any.
        var firstPartTS: String? = nil
        /// The run's progress message, when there is one to edit.
        var progressTS: String? = nil
        /// A bot token is configured, so `chat.*` methods work.
        var canPost: Bool
        var now: Date

        /// Whether a post to the `response_url` replaces what an earlier post to it left: only a
        /// slash command's first part (a resend after a crash then shows once). A button's
        /// `response_url` would replace the message holding the button; later parts must add.
        var replacesAtResponseURL: Bool {
            part == 0 && address.answersSlashCommand == true
        }

        /// Whether a post to the `response_url` can still succeed: there is one, it has not
        /// expired, and this entry has not used Slack's 5 posts. Every part that goes there is one
        /// use; parts past the fifth go by the bot token.
        var responseURLUsable: Bool {
            guard address.sealedResponseURL != nil, part < SlackAddress.responseURLUses else { return false }
            guard let expiry = address.responseURLExpiresAt else { return true }
            return now < expiry
        }
    }

    /// The routes for a public part, best first.
    ///
    /// The first part (when the progress message did not take it) goes to the `response_url`,
    /// else by `chat.postMessage`. Later parts follow the first: into the progress message's
    /// thread when it was edited, beside it when it was posted, through the `response_url` when
    /// it went there — each with the others as fallbacks.
    static func forPublicPart(_ situation: Situation) -> [SlackRoute] {
        let address = situation.address
        let responseURL: [SlackRoute] =
            situation.responseURLUsable ? [.responseURL(.inChannel, replaceOriginal: situation.replacesAtResponseURL)] : []
        var post: [SlackRoute] = situation.canPost ? [.postMessage(threadTS: address.threadTS)] : []
        if situation.part == 0 { return responseURL + post }
        guard let first = situation.firstPartTS else { return responseURL + post }
        if first == situation.progressTS, situation.canPost {
            post = [.postMessage(threadTS: address.threadTS ?? first)]
        }
        return post + responseURL
    }

    /// The routes for a private part: the `response_url` as ephemeral, else `chat.postEphemeral`.
    static func forPrivatePart(_ situation: Situation) -> [SlackRoute] {
        (situation.responseURLUsable ? [.responseURL(.ephemeral, replaceOriginal: situation.replacesAtResponseURL)] : [])
            + (situation.canPost ? [.postEphemeral(threadTS: situation.address.threadTS)] : [])
    }
}

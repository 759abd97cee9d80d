import Foundation

/// One way a new post can reach Mattermost, and the order they are tried in for each part
/// (after the edit of the run's progress post, `PUT /posts/{id}/patch`, that `Deliverer` tries
/// first).
enum MattermostRoute: Sendable, Hashable {
    /// `POST /posts` by the bot, in the address's thread.
    case post
    /// `POST /posts/ephemeral` to the person who asked.
    case ephemeralPost
    /// The slash command's `response_url`.
    case responseURL(MattermostCommandResponse.ResponseType)

    struct Situation: Sendable {
        var address: MattermostAddress
        var part: Int
        var canPost: Bool
        var hasResponseURL: Bool
        var now: Date

        /// A `response_url` that can still take this part: there is one, it has not expired, and
        /// this reply has not used Mattermost's 5 posts.
        var responseURLUsable: Bool {
            guard hasResponseURL, address.sealedResponseURL != nil, part < MattermostAddress.responseURLUses else { return false }
            guard let expiry = address.responseURLExpiresAt else { return true }
            return now < expiry
        }
    }

    /// A public part: the bot's post, the `response_url`.
    static func forPublicPart(_ situation: Situation) -> [MattermostRoute] {
        (situation.canPost ? [.post] : []) + (situation.responseURLUsable ? [.responseURL(.inChannel)] : [])
    }

    /// A private part: the `response_url` as ephemeral (it needs no permission), else an
    /// ephemeral post by the bot (which needs `create_post_ephemeral`, by default a system
    /// admin's). An error or help that neither takes (a mention's, where the bot lacks the
    /// permission) is posted in the thread instead: it says only what was typed wrong, and is
    /// better seen than lost. A private *result* never is, nor a secret (`Reply.staysPrivate`).
    static func forPrivatePart(_ situation: Situation, staysPrivate: Bool) -> [MattermostRoute] {
        (situation.responseURLUsable ? [.responseURL(.ephemeral)] : []) + (situation.canPost ? [.ephemeralPost] : [])
            + (situation.canPost && !staysPrivate ? [.post] : [])
    }
}

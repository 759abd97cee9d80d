public import Logging
public import RelayCore

/// Delivers outbox entries to Slack (the `ReplySender` for platform "slack").
///
/// - Progress: one message posted with `chat.postMessage`, then edited with `chat.update`
///   (needs the bot token; without it progress is skipped — the result still arrives).
/// - A public result replaces the progress message when there is one; otherwise it goes to the
///   `response_url` (slash commands, buttons) or `chat.postMessage` in the thread.
/// - A private result goes to the `response_url` as ephemeral, else `chat.postEphemeral`; a
///   public progress message is then turned into a short "sent only to you" note.
/// - Slack answers 429/`ratelimited`, 5xx, `channel_not_found`… become the outbox's outcomes
///   (retry no sooner than `Retry-After`, backoff, give up).
public struct SlackReplySender: ReplySender {
    public let platform = SlackEventMapping.platform
    /// Slack allows about one `chat.*` message a second per channel.
    let webAPIInterval: Duration
    let api: any SlackWebAPI
    let canPost: Bool
    let box: SlackSecretBox
    let logger: Logger

    /// `canPost`: a bot token is configured, so `chat.*` methods work.
    public init(api: any SlackWebAPI, canPost: Bool, box: SlackSecretBox, webAPIInterval: Duration = .seconds(1), logger: Logger) {
        self.api = api
        self.canPost = canPost
        self.box = box
        self.webAPIInterval = webAPIInterval
        self.logger = logger
    }

    /// Replies that go to a `response_url` (a slash command's answer) are not paced: the
    /// per-channel limit is `chat.postMessage`'s. Everything else waits its turn in the channel.
    public func minimumInterval(for entry: OutboxEntry) -> Duration {
        guard case .reply = entry.content, entry.replaces == nil, SlackAddress.decode(entry.address)?.sealedResponseURL != nil else {
            return webAPIInterval
        }
        return .zero
    }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = SlackAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Slack address cannot be read")
        }
        let responseURL = address.sealedResponseURL.flatMap(box.open)
        do throws(SlackAPIError) {
            switch entry.content {
            case .progress(let step):
                guard canPost else { return .sent(platformRef: nil) }
                let message = SlackReplyRenderer.render(step)
                if let ts = earlier?.platformRef {
                    return .sent(platformRef: try await api.update(channel: address.channel, ts: ts, text: message.text, blocks: message.blocks))
                }
                return .sent(
                    platformRef: try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: address.threadTS))
            case .reply(let reply):
                let messages = SlackReplyRenderer.render(reply, postToChannelID: reply.isPrivate ? entry.id : nil)
                let progressTS = canPost ? earlier?.platformRef : nil
                if reply.isPrivate {
                    return try await deliverPrivately(messages, address: address, responseURL: responseURL, progressTS: progressTS)
                }
                return try await deliverPublicly(messages, address: address, responseURL: responseURL, progressTS: progressTS)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    private func deliverPublicly(_ messages: [SlackMessage], address: SlackAddress, responseURL: String?, progressTS: String?) async throws(SlackAPIError)
        -> DeliveryOutcome
    {
        if let ts = progressTS, let first = messages.first {
            // The progress message becomes the result; any further parts follow in its thread.
            _ = try await api.update(channel: address.channel, ts: ts, text: first.text, blocks: first.blocks)
            for message in messages.dropFirst() {
                _ = try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: address.threadTS ?? ts)
            }
            return .sent(platformRef: ts)
        }
        if let responseURL {
            for message in messages { try await api.respond(to: responseURL, body: message.responseURLBody(.inChannel)) }
            return .sent(platformRef: nil)
        }
        guard canPost else { return .rejected(reason: "SLACK_BOT_TOKEN is not set and there is no response_url to answer through") }
        var firstTS: String?
        for message in messages {
            let ts = try await api.postMessage(channel: address.channel, text: message.text, blocks: message.blocks, threadTS: address.threadTS)
            firstTS = firstTS ?? ts
        }
        return .sent(platformRef: firstTS)
    }

    private func deliverPrivately(_ messages: [SlackMessage], address: SlackAddress, responseURL: String?, progressTS: String?) async throws(SlackAPIError)
        -> DeliveryOutcome
    {
        if let responseURL {
            for message in messages { try await api.respond(to: responseURL, body: message.responseURLBody(.ephemeral)) }
        } else if canPost {
            for message in messages {
                _ = try await api.postEphemeral(
                    channel: address.channel, user: address.user, text: message.text, blocks: message.blocks, threadTS: address.threadTS)
            }
        } else {
            return .rejected(reason: "SLACK_BOT_TOKEN is not set and there is no response_url to answer through")
        }
        if let ts = progressTS {
            // Best effort: the result is delivered; a stale progress line is only cosmetic.
            do throws(SlackAPIError) {
                _ = try await api.update(
                    channel: address.channel, ts: ts, text: "Finished — the result was sent privately to the person who asked.", blocks: nil)
            } catch {
                logger.notice("slack: could not tidy the progress message", metadata: ["reason": "\(error.reason)"])
            }
        }
        return .sent(platformRef: nil)
    }
}

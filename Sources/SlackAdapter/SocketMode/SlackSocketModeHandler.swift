public import Logging
import RelayCore

/// Socket Mode envelopes handed to the same `SlackInbound` as HTTP requests, so both modes
/// behave alike — the acknowledgement too: `SocketModeClient` acknowledges an envelope only when
/// this says its command is stored, as an HTTP request is answered 200 only then.
public struct SlackSocketModeHandler: Sendable {
    let inbound: SlackInbound
    let logger: Logger

    public init(inbound: SlackInbound, logger: Logger) {
        self.inbound = inbound
        self.logger = logger
    }

    /// Stores what the envelope asks for; returns whether to acknowledge it. A slash command is
    /// always acknowledged: when it could not be stored, the person is told so by a reply. An
    /// event or a button whose run could not be stored is not: Slack sends it again (its event
    /// key, or the button's trigger id, makes a second arrival after a stored one a duplicate).
    /// An unreadable payload is acknowledged (it would only fail again), and logged.
    public func handle(_ envelope: SocketModeEnvelope) async -> Bool {
        let bytes = envelope.payload.encoded()
        do {
            switch envelope.type {
            case .slashCommands:
                await inbound.slashCommand(try SlackSlashCommand.decode(json: bytes), acknowledged: true)
            case .eventsAPI:
                if case .eventCallback(let callback) = try SlackEventsRequest.decode(bytes) {
                    try await inbound.eventCallback(callback)
                }
            case .interactive:
                try await inbound.interaction(try SlackInteraction.decode(json: bytes))
            case .other(let type):
                logger.debug("slack: ignored a Socket Mode envelope", metadata: ["type": "\(type)"])
            }
            return true
        } catch let error as SlackPayloadError {
            PayloadDecoding.dropped(PayloadProblem(error.payload.rawValue, error.problem), platform: "slack", logger: logger)
            return true
        } catch {
            logger.error(
                "slack: a Socket Mode envelope could not be stored; not acknowledged, so Slack sends it again",
                metadata: ["type": "\(envelope.type)", "error": "\(error)"])
            return false
        }
    }
}

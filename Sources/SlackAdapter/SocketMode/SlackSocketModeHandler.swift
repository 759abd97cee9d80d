public import Logging
import RelayCore

/// Socket Mode envelopes (already acknowledged by `SocketModeClient`) handed to the same
/// `SlackInbound` as HTTP requests, so both modes behave alike.
public struct SlackSocketModeHandler: Sendable {
    let inbound: SlackInbound
    let logger: Logger

    public init(inbound: SlackInbound, logger: Logger) {
        self.inbound = inbound
        self.logger = logger
    }

    public func handle(_ envelope: SocketModeEnvelope) async {
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
        } catch {
            logger.warning("slack: a Socket Mode envelope could not be read", metadata: ["type": "\(envelope.type)", "reason": "\(error)"])
        }
    }
}

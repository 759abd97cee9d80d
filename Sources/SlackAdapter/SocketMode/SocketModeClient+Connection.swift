import Logging
import NIOWebSocket
import RelayCore
import RelayHTTP
import WSClient

extension SocketModeClient {
    /// Holds one websocket until it closes, then reports `.closed` with its uptime.
    func runConnection(_ id: ConnectionID, url: String, outgoing: AsyncStream<Outgoing>, input: Input) async {
        let started = ContinuousClock.now
        let logger = {
            var logger = self.logger
            logger[metadataKey: "slack.socket"] = "\(id)"
            return logger
        }()
        let webSocket = WebSocketClientConfiguration(
            maxFrameSize: configuration.maxMessageBytes,
            closeTimeout: configuration.closeTimeout,
            autoPing: .enabled(timePeriod: configuration.pingInterval),
            validateUTF8: true)
        let maxMessageBytes = configuration.maxMessageBytes
        let closeTimeout = configuration.closeTimeout
        do {
            let closeFrame = try await WebSocketClient.connect(url: url, configuration: webSocket, logger: logger) {
                inbound, outbound, _ in
                try await Self.exchange(
                    id, inbound: inbound, outbound: outbound, outgoing: outgoing, input: input,
                    maxMessageBytes: maxMessageBytes, closeTimeout: closeTimeout, logger: logger)
            }
            logger.debug(
                "Socket Mode websocket ended", metadata: ["slack.close": "\(closeFrame.map { "\($0.closeCode)" } ?? "none")"])
        } catch {
            // The reason is a fixed phrase: an error's own text could quote the URL's ticket.
            logger.info("Socket Mode websocket failed", metadata: ["slack.error": "\(Self.reason(error))"])
        }
        input.yield(.closed(id, uptime: started.duration(to: .now)))
    }

    /// Reads frames into `input` and writes what `outgoing` asks for, until either side closes.
    ///
    /// Returning from here makes WSClient finish the close handshake; after our own close
    /// frame the writer waits `closeTimeout` for the server's before giving up on it.
    static func exchange(
        _ id: ConnectionID,
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter,
        outgoing: AsyncStream<Outgoing>,
        input: Input,
        maxMessageBytes: Int,
        closeTimeout: Duration,
        logger: Logger
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    // Slack sends text frames only.
                    guard case .text(let text) = message else { continue }
                    switch SocketModeMessage.read(text) {
                    case .success(let parsed): input.yield(.received(parsed, on: id))
                    case .failure(let problem): PayloadDecoding.dropped(problem, platform: "slack", logger: logger)
                    }
                }
            }
            group.addTask {
                for await item in outgoing {
                    switch item {
                    case .text(let text):
                        try await outbound.write(.text(text))
                    case .close:
                        try await outbound.close(.normalClosure, reason: nil)
                        // The reader ends when the server's close frame arrives.
                        try await Task.sleep(for: closeTimeout)
                        return
                    }
                }
            }
            // Whichever ends first ends the connection.
            _ = try await group.next()
            group.cancelAll()
        }
    }

    /// A short reason for a websocket failure.
    static func reason(_ error: any Error) -> String {
        // WSClient's own errors describe themselves in fixed words, without the URL.
        if let error = error as? WebSocketClientError { return error.description }
        return ConnectionFailure.reason(error)
    }
}

import Logging
import RelayCore
import RelayPlatform

extension SocketModeClient {
    typealias Input = AsyncStream<SocketModeStateMachine.Event>.Continuation
    typealias ConnectionID = SocketModeStateMachine.ConnectionID

    /// What the run loop asks a connection to write.
    enum Outgoing: Sendable {
        case text(String)
        case close
    }

    /// Carries out one action. Everything slow runs in a child task that reports back
    /// through `input`, so the run loop never waits on the network.
    func perform(
        _ action: SocketModeStateMachine.Action,
        input: Input,
        io: inout DiscardingTaskGroup,
        deliveries: inout DiscardingTaskGroup,
        outboxes: inout [ConnectionID: AsyncStream<Outgoing>.Continuation]
    ) {
        switch action {
        case .requestURL:
            io.addTask { await self.requestURL(input: input) }

        case .connect(let id, let url):
            let (outgoing, outbox) = AsyncStream.makeStream(of: Outgoing.self)
            outboxes[id] = outbox
            io.addTask { await self.runConnection(id, url: url, outgoing: outgoing, input: input) }
            let helloTimeout = configuration.helloTimeout
            let healthyUptime = configuration.healthyUptime
            let clock = clock
            io.addTask {
                do { try await clock.sleep(for: helloTimeout) } catch { return }
                input.yield(.helloTimedOut(id))
            }
            // After this long the connection counts as healthy (if it is still the current one).
            io.addTask {
                do { try await clock.sleep(for: healthyUptime) } catch { return }
                input.yield(.uptimeReached(id))
            }

        case .acknowledge(let envelope, let id):
            let sent = outboxes[id].map { $0.yield(.text(envelope.acknowledgement())) }
            if case .enqueued? = sent {
                return
            }
            // Slack sends it again on another connection; it is acknowledged there as a repeat.
            logger.notice(
                "Socket Mode envelope not acknowledged: its connection is gone",
                metadata: ["slack.socket": "\(id)", "slack.envelope": "\(envelope.envelopeID)"])

        case .deliver(let envelope):
            let handler = self.handler
            deliveries.addTask { input.yield(.handled(envelope, acknowledge: await handler(envelope))) }

        case .close(let id):
            outboxes[id]?.yield(.close)

        case .retry(let delay):
            logger.notice(
                "Socket Mode reconnecting after a delay", metadata: ["slack.delay": "\(delay)"])
            let clock = clock
            io.addTask {
                do { try await clock.sleep(for: delay) } catch { return }
                input.yield(.retryTimerFired)
            }
        }
    }

    /// Asks Slack for a connection URL and reports the outcome.
    func requestURL(input: Input) async {
        do {
            let url = try await web.openSocketModeConnection(appToken: appToken)
            credentials.accepted("SLACK_APP_TOKEN")
            input.yield(.urlOpened(url))
        } catch {
            if case .cancelled = error { return }
            var retryAfter: Duration?
            if case .rateLimited(_, let seconds) = error { retryAfter = seconds }
            // A refused token will not fix itself: it is in /readyz and the log (once a minute),
            // and the client keeps trying (the token may be rotated while the relay runs, and
            // the other platforms keep working).
            if error.refusesCredentials {
                credentials.refused("SLACK_APP_TOKEN", reason: error.reason)
            } else {
                let level: Logger.Level = error.isRetryable ? .warning : .error
                logger.log(level: level, "Socket Mode could not open a connection", metadata: ["slack.error": "\(error.reason)"])
            }
            input.yield(.urlFailed(retryAfter: retryAfter))
        }
    }

    /// Logs the events worth a line; never a URL or a payload.
    func note(_ event: SocketModeStateMachine.Event, actions: [SocketModeStateMachine.Action]) {
        switch event {
        case .received(.hello(let count), let id):
            logger.info(
                "Socket Mode connected",
                metadata: ["slack.socket": "\(id)", "slack.connections": "\(count.map(String.init) ?? "?")"])
        case .received(.disconnect(let reason), let id):
            logger.info("Slack asked to reconnect", metadata: ["slack.socket": "\(id)", "slack.reason": "\(reason)"])
        case .uptimeReached(let id):
            logger.debug("Socket Mode connection up long enough to count as healthy", metadata: ["slack.socket": "\(id)"])
        case .received(.envelope(let envelope), let id):
            let delivered = actions.contains { if case .deliver = $0 { true } else { false } }
            logger.debug(
                delivered ? "Socket Mode envelope received" : "Socket Mode envelope repeated; not handed on again",
                metadata: [
                    "slack.socket": "\(id)", "slack.envelope": "\(envelope.envelopeID)", "slack.type": "\(envelope.type)",
                    "slack.retry": "\(envelope.retryAttempt)",
                ])
        case .helloTimedOut(let id) where !actions.isEmpty:
            logger.warning("Socket Mode connection did not say hello in time", metadata: ["slack.socket": "\(id)"])
        case .closed(let id, let uptime):
            let unexpected = actions.contains { if case .retry = $0 { true } else { false } }
            logger.log(
                level: unexpected ? .warning : .debug,
                unexpected ? "Socket Mode connection lost" : "Socket Mode connection closed",
                metadata: ["slack.socket": "\(id)", "slack.uptime": "\(uptime)"])
        case .stop:
            logger.info("Socket Mode stopping")
        default:
            break
        }
    }
}

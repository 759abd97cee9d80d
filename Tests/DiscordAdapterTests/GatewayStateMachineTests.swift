import Foundation
import RelayCore
import Testing

@testable import DiscordAdapter

@Suite("Discord gateway state machine")
struct GatewayStateMachineTests {
    typealias Machine = GatewayStateMachine
    static let gateway = "wss://gateway.discord.gg"
    static let resumeURL = "wss://gateway-us-east1-b.discord.gg"
    static let identify = GatewayIdentify(intents: .relay)

    /// No jitter in the backoff (1, 2, 4… s, capped at 8) and a fixed random for the first beat.
    static func machine(random: Double = 0.25, identifySpacing: Duration = .seconds(5)) -> Machine {
        Machine(
            identify: identify, backoff: Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0), handshakeTimeout: .seconds(30),
            identifySpacing: identifySpacing, unitRandom: { random })
    }

    static func dispatch(_ name: String, _ sequence: Int?, _ data: JSONValue = [:]) -> GatewayMessage {
        .dispatch(GatewayDispatch(name: name, sequence: sequence, data: data))
    }

    static let ready = dispatch("READY", 1, ["session_id": "s-1", "resume_gateway_url": .string(resumeURL), "user": ["id": "1234567890123456789"]])

    /// Connection 1 ready, with session s-1 at sequence 1.
    static func ready(random: Double = 0.25) -> Machine {
        var machine = machine(random: random)
        _ = machine.handle(.start(gatewayURL: gateway))
        _ = machine.handle(.received(.hello(heartbeatInterval: .milliseconds(41_250)), on: 1))
        _ = machine.handle(.received(Self.ready, on: 1))
        return machine
    }

    @Test func startConnectsThenHelloIdentifiesAndJittersTheFirstHeartbeat() {
        var machine = Self.machine(random: 0.25)
        #expect(
            machine.handle(.start(gatewayURL: Self.gateway)) == [
                .connect(1, url: "wss://gateway.discord.gg/?v=10&encoding=json"), .scheduleHandshakeTimeout(1, after: .seconds(30)),
            ])
        #expect(machine.state == .connecting(1))
        #expect(machine.handle(.start(gatewayURL: Self.gateway)) == [], "a second start does nothing")

        #expect(
            machine.handle(.received(.hello(heartbeatInterval: .milliseconds(40_000)), on: 1)) == [
                .send(.identify(Self.identify), on: 1), .scheduleHeartbeat(1, after: .seconds(10)),
            ])
        #expect(machine.state == .handshaking(1))
        #expect(machine.identifyCount == 1)

        let actions = machine.handle(.received(Self.ready, on: 1))
        #expect(
            actions == [
                .deliver(
                    GatewayDispatch(
                        name: "READY", sequence: 1,
                        data: ["session_id": "s-1", "resume_gateway_url": .string(Self.resumeURL), "user": ["id": "1234567890123456789"]]))
            ])
        #expect(machine.state == .ready(1))
        #expect(machine.session == Machine.Session(sessionID: "s-1", resumeURL: Self.resumeURL))
        #expect(machine.sequence == 1)
    }

    @Test func heartbeatsCarryTheLastSequenceAndAMissingACKMeansAZombieThatIsResumed() {
        var machine = Self.ready()
        _ = machine.handle(.received(Self.dispatch("MESSAGE_CREATE", 2, ["id": "m1"]), on: 1))
        _ = machine.handle(.received(Self.dispatch("MESSAGE_CREATE", 5, ["id": "m2"]), on: 1))
        #expect(machine.handle(.heartbeatDue(1)) == [.send(.heartbeat(sequence: 5), on: 1), .scheduleHeartbeat(1, after: .milliseconds(41_250))])
        #expect(machine.handle(.received(.heartbeatACK, on: 1)) == [])
        #expect(machine.handle(.heartbeatDue(1)) == [.send(.heartbeat(sequence: 5), on: 1), .scheduleHeartbeat(1, after: .milliseconds(41_250))])
        // No ACK came for that one: close with a code that keeps the session, and resume.
        #expect(machine.handle(.heartbeatDue(1)) == [.close(1, code: 4000), .reconnect(after: .seconds(1))])
        #expect(machine.state == .waitingToReconnect)
        #expect(machine.handle(.closed(1, code: 4000)) == [], "the close it asked for is expected")

        #expect(
            machine.handle(.reconnectDue) == [
                .connect(2, url: Self.resumeURL + "/?v=10&encoding=json"), .scheduleHandshakeTimeout(2, after: .seconds(30)),
            ])
        #expect(
            machine.handle(.received(.hello(heartbeatInterval: .milliseconds(41_250)), on: 2)).first == .send(.resume(sessionID: "s-1", sequence: 5), on: 2))
        #expect(machine.identifyCount == 1, "a resume is not an identify")
        // Missed events are replayed before RESUMED, and delivered.
        #expect(
            machine.handle(.received(Self.dispatch("MESSAGE_CREATE", 6, ["id": "m3"]), on: 2)) == [
                .deliver(GatewayDispatch(name: "MESSAGE_CREATE", sequence: 6, data: ["id": "m3"]))
            ])
        _ = machine.handle(.received(Self.dispatch("RESUMED", 7), on: 2))
        #expect(machine.state == .ready(2))
        #expect(machine.sequence == 7)
    }

    @Test func aDroppedSocketResumesAfterABackoffThatGrowsUntilAConnectionIsHealthy() {
        var machine = Self.ready()
        #expect(machine.handle(.closed(1, code: nil)) == [.reconnect(after: .seconds(1))])
        _ = machine.handle(.reconnectDue)
        #expect(machine.handle(.closed(2, code: 4000)) == [.reconnect(after: .seconds(2))], "never a tight loop")
        _ = machine.handle(.reconnectDue)
        #expect(machine.handle(.handshakeTimedOut(3)) == [.close(3, code: 4000), .reconnect(after: .seconds(4))])
        _ = machine.handle(.reconnectDue)
        _ = machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 4))
        _ = machine.handle(.received(Self.dispatch("RESUMED", 2), on: 4))
        // Ready, and two heartbeats answered: healthy, so the next drop starts the backoff over.
        for _ in 0..<2 {
            _ = machine.handle(.heartbeatDue(4))
            _ = machine.handle(.received(.heartbeatACK, on: 4))
        }
        #expect(machine.handle(.closed(4, code: 1006)) == [.reconnect(after: .seconds(1))])
    }

    @Test func reconnectOpcodeResumesAndInvalidSessionResumesOrReidentifies() {
        var machine = Self.ready()
        #expect(machine.handle(.received(.reconnect, on: 1)) == [.close(1, code: 4000), .reconnect(after: .seconds(1))])
        _ = machine.handle(.reconnectDue)
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 2)).first == .send(.resume(sessionID: "s-1", sequence: 1), on: 2))

        // d: true — the session may still resume.
        #expect(machine.handle(.received(.invalidSession(resumable: true), on: 2)) == [.close(2, code: 4000), .reconnect(after: .seconds(2))])
        #expect(machine.session != nil)
        _ = machine.handle(.reconnectDue)
        _ = machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 3))

        // d: false — forget it, wait 1–5 s (random 0.25 → 2 s, but the backoff is at 4 s, and
        // an identify follows another no sooner than 5 s), then IDENTIFY at the gateway URL.
        #expect(machine.handle(.received(.invalidSession(resumable: false), on: 3)) == [.close(3, code: 4000), .reconnect(after: .seconds(5))])
        #expect(machine.session == nil && machine.sequence == nil)
        #expect(machine.handle(.reconnectDue).first == .connect(4, url: "wss://gateway.discord.gg/?v=10&encoding=json"))
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 4)).first == .send(.identify(Self.identify), on: 4))
        #expect(machine.identifyCount == 2)
    }

    @Test func invalidSessionWaitsOneToFiveSecondsByTheInjectedRandom() {
        for (random, expected) in [(0.0, Duration.seconds(1)), (1.0, .seconds(5)), (0.5, .seconds(3))] {
            var machine = Self.machine(random: random, identifySpacing: .zero)
            _ = machine.handle(.start(gatewayURL: Self.gateway))
            _ = machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 1))
            // The identify was refused: the next waits 1–5 s (the first backoff is only 1 s).
            let actions = machine.handle(.received(.invalidSession(resumable: false), on: 1))
            #expect(actions == [.close(1, code: 4000), .reconnect(after: expected)])
        }
        // The first heartbeat's jitter is the interval × the random.
        var machine = Self.machine(random: 1)
        _ = machine.handle(.start(gatewayURL: Self.gateway))
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 1)).last == .scheduleHeartbeat(1, after: .seconds(40)))
    }

    @Test(arguments: [4004, 4010, 4011, 4012, 4013, 4014])
    func fatalCloseCodesStopAndSayWhy(code: Int) {
        var machine = Self.ready()
        let reason = GatewayStopReason(closeCode: code)!
        #expect(machine.handle(.closed(1, code: code)) == [.stop(reason)])
        #expect(machine.state == .stopped(reason))
        #expect(machine.handle(.reconnectDue) == [])
        #expect(machine.handle(.start(gatewayURL: Self.gateway)) == [])
        #expect("\(reason)".contains("\(code)"))
    }

    @Test(arguments: [4000, 4001, 4002, 4003, 4005, 4008, 1000, 1001, 1006])
    func otherCloseCodesResume(code: Int) {
        var machine = Self.ready()
        #expect(machine.handle(.closed(1, code: code)) == [.reconnect(after: .seconds(1))])
        #expect(machine.session != nil)
        #expect(machine.handle(.reconnectDue).first == .connect(2, url: Self.resumeURL + "/?v=10&encoding=json"))
    }

    @Test(arguments: [4007, 4009])
    func sessionEndingCloseCodesIdentifyAgain(code: Int) {
        var machine = Self.ready()
        #expect(machine.handle(.closed(1, code: code)) == [.reconnect(after: .seconds(5))])
        #expect(machine.session == nil)
        _ = machine.handle(.reconnectDue)
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 2)).first == .send(.identify(Self.identify), on: 2))
    }

    @Test func staleEventsOfAReplacedConnectionAreIgnored() {
        var machine = Self.ready()
        _ = machine.handle(.received(.reconnect, on: 1))
        _ = machine.handle(.reconnectDue)
        #expect(machine.handle(.heartbeatDue(1)) == [])
        #expect(machine.handle(.received(Self.dispatch("MESSAGE_CREATE", 99), on: 1)) == [])
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(1)), on: 1)) == [])
        #expect(machine.handle(.handshakeTimedOut(1)) == [])
        #expect(machine.handle(.closed(1, code: 4004)) == [], "a fatal code on an old connection does not stop the new one")
        #expect(machine.sequence == 1)
        #expect(machine.state == .connecting(2))
    }

    @Test func aServerHeartbeatRequestIsAnsweredAtOnce() {
        var machine = Self.ready()
        #expect(machine.handle(.received(.heartbeatRequest, on: 1)) == [.send(.heartbeat(sequence: 1), on: 1)])
    }

    @Test func stopClosesWith1000AndEndsEverything() {
        var machine = Self.ready()
        #expect(machine.handle(.stop) == [.close(1, code: 1000)])
        #expect(machine.state == .stopped(nil))
        #expect(machine.handle(.closed(1, code: 1000)) == [])
        #expect(machine.handle(.stop) == [])
        var waiting = Self.ready()
        _ = waiting.handle(.closed(1, code: nil))
        #expect(waiting.handle(.stop) == [])
        #expect(waiting.handle(.reconnectDue) == [])
    }

    @Test func stopEndsTheSessionAndHandOverKeepsItForTheNextHolder() {
        var stopped = Self.ready()
        _ = stopped.handle(.stop)
        #expect(stopped.resumeState == nil, "1000 ends the session on Discord's side")

        var handed = Self.ready()
        #expect(handed.handle(.handOver) == [.close(1, code: 4000)])
        #expect(handed.state == .stopped(nil))
        #expect(handed.resumeState == GatewayResumeState(sessionID: "s-1", sequence: 1, resumeURL: Self.resumeURL))
        #expect(handed.handle(.stop) == [], "already stopped")

        var fatal = Self.ready()
        _ = fatal.handle(.closed(1, code: 4004))
        #expect(fatal.resumeState == nil)
    }

    @Test func aRestoredSessionIsResumedAtItsURLAndIdentifiedWhenDiscordForgotIt() {
        var machine = Self.machine(random: 0)
        machine.restore(GatewayResumeState(sessionID: "s-7", sequence: 41, resumeURL: Self.resumeURL))
        #expect(machine.handle(.start(gatewayURL: Self.gateway)).first == .connect(1, url: Self.resumeURL + "/?v=10&encoding=json"))
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 1)).first == .send(.resume(sessionID: "s-7", sequence: 41), on: 1))
        #expect(machine.identifyCount == 0)
        // Discord no longer knows it: after 1 s (the random is 0), a new connection IDENTIFYs.
        #expect(machine.handle(.received(.invalidSession(resumable: false), on: 1)) == [.close(1, code: 4000), .reconnect(after: .seconds(1))])
        #expect(machine.handle(.reconnectDue).first == .connect(2, url: "wss://gateway.discord.gg/?v=10&encoding=json"))
        #expect(machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 2)).first == .send(.identify(Self.identify), on: 2))
        // Once started, a restore changes nothing.
        machine.restore(GatewayResumeState(sessionID: "s-8", sequence: 1, resumeURL: Self.resumeURL))
        #expect(machine.session == nil)
    }

    @Test func theSavedResumeStateReadsBackAndRefusesAnOddURL() {
        let state = GatewayResumeState(sessionID: "s-1", sequence: 42, resumeURL: Self.resumeURL, botUserID: "1234567890123456789")
        #expect(GatewayResumeState(saved: state.saved) == state)
        #expect(GatewayResumeState(saved: "") == nil, "an empty state: nothing to resume")
        #expect(GatewayResumeState(saved: #"{"session_id":"s-1","seq":42,"resume_gateway_url":"http://evil.example"}"#) == nil)
        #expect(GatewayResumeState(saved: #"{"session_id":"s-1","seq":-1,"resume_gateway_url":"wss://r.discord.gg"}"#) == nil)
        let noUser = GatewayResumeState(saved: #"{"session_id":"s-1","seq":1,"resume_gateway_url":"wss://r.discord.gg","user_id":"me"}"#)
        #expect(noUser?.botUserID == nil)
    }

    @Test func theClientSavesAtOnceWhenTheSessionChangesAndNewSequencesAtMostEveryInterval() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let interval = Duration.seconds(5)
        func state(_ session: String, _ sequence: Int) -> GatewayResumeState {
            GatewayResumeState(sessionID: session, sequence: sequence, resumeURL: Self.resumeURL)
        }
        func received(_ name: String) -> Machine.Event { .received(Self.dispatch(name, 1), on: 1) }
        var saving = ResumeSaving(saved: nil, at: start)
        #expect(saving.due(state("s-1", 1), after: received("READY"), now: start, interval: interval) == .some(state("s-1", 1)))
        #expect(saving.due(state("s-1", 1), after: received("GUILD_CREATE"), now: start + .seconds(9), interval: interval) == nil, "unchanged")
        #expect(saving.due(state("s-1", 2), after: received("MESSAGE_CREATE"), now: start + .seconds(1), interval: interval) == nil, "too soon")
        #expect(saving.due(state("s-1", 3), after: .heartbeatDue(1), now: start + .seconds(5), interval: interval) == .some(state("s-1", 3)))
        #expect(saving.due(state("s-1", 4), after: received("RESUMED"), now: start + .seconds(6), interval: interval) == .some(state("s-1", 4)))
        #expect(saving.due(nil, after: .closed(1, code: 4004), now: start + .seconds(7), interval: interval) == .some(nil), "the session ended")
    }

    @Test func aReadyWithAnOddResumeURLResumesAtTheGatewayInstead() {
        var machine = Self.machine()
        _ = machine.handle(.start(gatewayURL: Self.gateway))
        _ = machine.handle(.received(.hello(heartbeatInterval: .seconds(40)), on: 1))
        _ = machine.handle(.received(Self.dispatch("READY", 1, ["session_id": "s-9", "resume_gateway_url": "http://evil.example"]), on: 1))
        #expect(machine.session?.resumeURL == Self.gateway)
        #expect(GatewayReady.acceptedResumeURL("ws://127.0.0.1:8123") != nil)
        #expect(GatewayReady.acceptedResumeURL("ws://127.0.0.1.evil.example") == nil)
        #expect(GatewayReady.acceptedResumeURL("ws://example.com") == nil)
    }
}

@Suite("Discord gateway frames")
struct GatewayPayloadTests {
    @Test func framesDecodeIntoWhatTheyMean() throws {
        #expect(
            GatewayMessage.decode(Array(#"{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}"#.utf8))
                == .hello(heartbeatInterval: .milliseconds(41_250)))
        #expect(GatewayMessage.decode(Array(#"{"op":11}"#.utf8)) == .heartbeatACK)
        #expect(GatewayMessage.decode(Array(#"{"op":1,"d":null}"#.utf8)) == .heartbeatRequest)
        #expect(GatewayMessage.decode(Array(#"{"op":7,"d":null}"#.utf8)) == .reconnect)
        #expect(GatewayMessage.decode(Array(#"{"op":9,"d":true}"#.utf8)) == .invalidSession(resumable: true))
        #expect(GatewayMessage.decode(Array(#"{"op":9,"d":"yes"}"#.utf8)) == .invalidSession(resumable: false))
        #expect(
            GatewayMessage.decode(Array(#"{"op":0,"s":42,"t":"MESSAGE_CREATE","d":{"id":"1","content":"hi"}}"#.utf8))
                == .dispatch(GatewayDispatch(name: "MESSAGE_CREATE", sequence: 42, data: ["id": "1", "content": "hi"])))
        let ready = try #require(
            GatewayDispatch(name: "READY", sequence: 1, data: ["session_id": "abc", "resume_gateway_url": "wss://r.discord.gg", "user": ["id": "42"]]).ready)
        #expect(ready.sessionID == "abc" && ready.resumeGatewayURL == "wss://r.discord.gg")
        #expect(ready.userID == "42")
        // An event the relay acts on, whose data does not decode: dropped by name, its sequence kept.
        let odd = try #require(GatewayMessage.decode(Array(#"{"op":0,"s":7,"t":"MESSAGE_CREATE","d":{"content":"no id"}}"#.utf8)))
        #expect(
            odd
                == .dispatch(
                    GatewayDispatch(name: "MESSAGE_CREATE", sequence: 7, event: .undecodable(PayloadProblem("Discord MESSAGE_CREATE", "missing field `d.id`"))))
        )
        #expect(GatewayDispatch(name: "GUILD_CREATE", sequence: 8, data: ["id": 5]).event == .unread)
        #expect(throws: PayloadProblem("Discord gateway frame", "missing field `op`")) { try GatewayMessage.read(Array(#"{"d":null}"#.utf8)) }
    }

    @Test func hostileNumbersAreClampedOrDropped() {
        let observed = UntrustedNumber.Observer { _ in }
        UntrustedNumber.$observer.withValue(observed) {
            func hello(_ value: String) -> GatewayMessage? { GatewayMessage.decode(Array(#"{"op":10,"d":{"heartbeat_interval":\#(value)}}"#.utf8)) }
            #expect(hello("0") == .hello(heartbeatInterval: .seconds(1)))
            #expect(hello("-5") == .hello(heartbeatInterval: .seconds(1)))
            #expect(hello("1e300") == .hello(heartbeatInterval: .seconds(600)))
            #expect(hello("\"fast\"") == .hello(heartbeatInterval: .milliseconds(41_250)))
            #expect(GatewayMessage.decode(Array(#"{"op":10,"d":null}"#.utf8)) == .hello(heartbeatInterval: .milliseconds(41_250)))
            func sequence(_ value: String) -> Int?? {
                guard case .dispatch(let dispatch) = GatewayMessage.decode(Array(#"{"op":0,"s":\#(value),"t":"X"}"#.utf8)) else { return nil }
                return .some(dispatch.sequence)
            }
            #expect(sequence("-3") == .some(nil))
            #expect(sequence("1e30") == .some(nil))
            #expect(sequence("2.5") == .some(nil))
            #expect(sequence("12") == .some(12))
        }
    }

    @Test func hostileInputNeverCrashes() {
        let inputs = [
            "", "null", "[]", "{}", #"{"op":"10"}"#, #"{"op":1e99}"#, #"{"op":-1}"#, #"{"op":300}"#,
            "{\"op\":0,\"t\":\"" + String(repeating: "A", count: 500) + "\"}",
            String(repeating: "[", count: 100_000), String(repeating: "{\"d\":", count: 50_000), "\u{FFFF}\u{0}", #"{"op":0,"d":{"session_id":5}}"#,
        ]
        for input in inputs {
            let message = GatewayMessage.decode(Array(input.utf8))
            if case .dispatch(let dispatch) = message { #expect(dispatch.name.utf8.count <= 64) }
        }
        #expect(GatewayMessage.decode(Array(#"{"op":300}"#.utf8)) == nil)
        #expect(GatewayMessage.decode(Array(#"{"op":3}"#.utf8)) == .other(op: 3))
    }

    @Test func commandsEncodeAsDiscordExpectsAndTheTokenOnlyThere() throws {
        let token = DiscordToken("MTIz.secret-token\n")
        let identify = GatewayCommand.identify(GatewayIdentify(intents: .relay, shard: GatewayShard(id: 0, count: 2)))
        let json = try #require(JSONValue.parse(identify.frame(token: token).encoded()))
        #expect(
            json == [
                "op": 2, "s": nil, "t": nil,
                "d": [
                    "token": "MTIz.secret-token", "intents": 38_400, "properties": ["os": "linux", "browser": "rhea-relay", "device": "rhea-relay"],
                    "shard": [0, 2],
                ],
            ])
        #expect(
            JSONValue.parse(GatewayCommand.resume(sessionID: "s", sequence: 9).frame(token: token).encoded())?["d"] == [
                "token": "MTIz.secret-token", "session_id": "s", "seq": 9,
            ])
        #expect(GatewayCommand.heartbeat(sequence: nil).frame(token: token).encoded() == Array(#"{"d":null,"op":1,"s":null,"t":null}"#.utf8))
        #expect(GatewayCommand.heartbeat(sequence: 7).frame(token: token).json["d"] == 7)
        // Nothing that can be logged shows the token.
        for text in ["\(token)", String(reflecting: token), "\(identify)", "\(GatewayStateMachine.Action.send(identify, on: 1))"] {
            #expect(!text.contains("secret"), "\(text)")
        }
        #expect(token.authorization == "Bot MTIz.secret-token")
    }

    @Test func theIntentsAreTheDocumentedOnes() {
        #expect(GatewayIntents.relay.rawValue == (1 << 9) | (1 << 10) | (1 << 12) | (1 << 15))
        #expect(GatewayIntents.relayWithoutMessageContent.rawValue == 5632)
        #expect(!GatewayIntents.relay.contains(.guilds))
    }
}

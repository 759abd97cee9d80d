import Foundation
import Testing

@testable import IRCAdapter

/// Registration as transcripts (issue 43, point 1): SASL PLAIN where the server offers it (ngIRCd
/// does not, so the real-server tests cover PASS), PASS where it does not, a taken nick, PING,
/// and who is in each channel.
@Suite("IRC: registration, line by line")
struct IRCSessionStateTests {
    func sent(_ actions: [IRCSessionState.Action]) -> [String] {
        actions.compactMap { if case .send(let message) = $0 { message.line } else { nil } }
    }

    func feed(_ state: inout IRCSessionState, _ line: String) -> [IRCSessionState.Action] {
        state.receive(IRCMessage(line: Substring(line))!)
    }

    @Test func saslPlainWhereOffered() {
        var state = IRCSessionState(nick: "Rhea", password: "hunter2", channels: ["#a", "#b"])
        #expect(state.opening().map(\.line) == ["CAP LS 302"])
        #expect(sent(feed(&state, ":srv CAP * LS * :multi-prefix")) == [], "a list in several lines is read to its end")
        #expect(sent(feed(&state, ":srv CAP * LS :sasl=PLAIN,EXTERNAL server-time")) == ["CAP REQ sasl", "NICK Rhea", "USER rhea 0 * :Rhea Relay"])
        #expect(sent(feed(&state, ":srv CAP Rhea ACK :sasl")) == ["AUTHENTICATE PLAIN"])
        let credentials = Data("\0Rhea\0hunter2".utf8).base64EncodedString()
        #expect(sent(feed(&state, "AUTHENTICATE +")) == ["AUTHENTICATE \(credentials)"])
        #expect(sent(feed(&state, ":srv 903 Rhea :SASL authentication successful")) == ["CAP END"])
        let welcome = feed(&state, ":srv 001 Rhea :Welcome")
        #expect(welcome.first == .welcomed(nick: "Rhea"))
        #expect(sent(welcome) == ["JOIN #a,#b"])
    }

    @Test func aRefusedSASLPasswordStopsWithTheReason() {
        var state = IRCSessionState(nick: "Rhea", password: "wrong", channels: [])
        _ = feed(&state, ":srv CAP * LS :sasl")
        _ = feed(&state, ":srv CAP Rhea ACK :sasl")
        _ = feed(&state, "AUTHENTICATE +")
        let refused = feed(&state, ":srv 904 Rhea :SASL authentication failed")
        #expect(refused == [.refusedCredentials("SASL authentication failed (904: SASL authentication failed)")])
    }

    @Test func passWhereSASLIsNotOfferedOrCAPIsUnknown() {
        var state = IRCSessionState(nick: "Rhea", password: "pw", channels: [])
        #expect(sent(feed(&state, ":srv CAP * LS :multi-prefix")) == ["PASS pw", "NICK Rhea", "USER rhea 0 * :Rhea Relay", "CAP END"])
        var old = IRCSessionState(nick: "Rhea", password: nil, channels: [])
        #expect(sent(feed(&old, ":srv 421 * CAP :Unknown command")) == ["NICK Rhea", "USER rhea 0 * :Rhea Relay", "CAP END"])
        #expect(feed(&old, ":srv 464 Rhea :Password incorrect") == [.refusedCredentials("the server refused the password (464: Password incorrect)")])
    }

    @Test func aTakenNickFallsBackThenGivesUp() {
        var state = IRCSessionState(nick: "Rhea", password: nil, channels: ["#a"])
        _ = feed(&state, ":srv CAP * LS :")
        var tried: [String] = []
        for _ in 0..<11 { tried += sent(feed(&state, ":srv 433 * Rhea :Nickname already in use")) }
        #expect(tried == ["NICK Rhea_", "NICK Rhea__"] + (1...9).map { "NICK Rhea\($0)" })
        let last = feed(&state, ":srv 433 * Rhea9 :Nickname already in use")
        #expect(last.count == 1 && { if case .close = last[0] { true } else { false } }())
        #expect(IRCSessionState.fallbacks(for: "LongNick9", length: 9).prefix(3) == ["LongNick_", "LongNic__", "LongNick1"])
    }

    @Test func pingMembersAndKicks() {
        var state = IRCSessionState(nick: "Rhea", password: nil, channels: ["#a"])
        _ = feed(&state, ":srv CAP * LS :")
        _ = feed(&state, ":srv 001 Rhea :Welcome")
        #expect(sent(feed(&state, "PING :srv.example")) == ["PONG srv.example"])
        _ = feed(&state, ":srv 353 Rhea = #a :@Rhea +ada bob")
        _ = feed(&state, ":carol!c@h JOIN #a")
        _ = feed(&state, ":bob!b@h NICK robert")
        _ = feed(&state, ":ada!a@h PART #a :bye")
        #expect(state.members(of: "#A") == ["carol", "robert"])
        _ = feed(&state, ":carol!c@h QUIT :gone")
        #expect(state.members(of: "#a") == ["robert"])
        #expect(sent(feed(&state, ":op!o@h KICK #a Rhea :out")) == ["JOIN #a"], "kicked: back in once")
        #expect(feed(&state, ":srv PONG srv :rhea-7") == [.pong("rhea-7")])
    }
}

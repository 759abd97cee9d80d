import Foundation
import NIOCore
import NIOPosix

/// Why a webhook delivery did not get an answer.
public enum FakeTelegramDeliveryError: Error, Sendable, Hashable {
    /// Only `http://host:port/path` URLs are delivered to (tests run on loopback).
    case unsupportedURL(String)
    /// `deliver(_:)` without a webhook set through `setWebhook`.
    case noWebhook
    /// No complete answer within the time limit.
    case timedOut
    /// The answer was not HTTP/1.1.
    case malformedResponse(String)
}

/// POSTs an update the way Telegram's webhook delivery does, over a plain TCP connection (the
/// test support library has no HTTP client of its own): one request, `Connection: close`.
enum FakeTelegramWebhookClient {
    static func post(url: String, body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> (status: Int, body: String) {
        guard url.hasPrefix("http://") else { throw FakeTelegramDeliveryError.unsupportedURL(url) }
        let rest = url.dropFirst("http://".count)
        let authority = String(rest.prefix { $0 != "/" && $0 != "?" })
        var path = String(rest.dropFirst(authority.count))
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        let hostPort = authority.split(separator: ":", maxSplits: 1).map(String.init)
        guard let host = hostPort.first, !host.isEmpty, let port = hostPort.count > 1 ? Int(hostPort[1]) : 80 else {
            throw FakeTelegramDeliveryError.unsupportedURL(url)
        }
        var head = "POST \(path) HTTP/1.1\r\nHost: \(authority)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        return try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
            group.addTask { try await exchange(host: host, port: port, request: request) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw FakeTelegramDeliveryError.timedOut
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw FakeTelegramDeliveryError.timedOut }
            return first
        }
    }

    private static func exchange(host: String, port: Int, request: [UInt8]) async throws -> (status: Int, body: String) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: request))
            var received: [UInt8] = []
            for try await chunk in inbound {
                received += chunk.readableBytesView
                if let response = try parse(received, ended: false) { return response }
            }
            guard let response = try parse(received, ended: true) else {
                throw FakeTelegramDeliveryError.malformedResponse(String(decoding: received.prefix(200), as: UTF8.self))
            }
            return response
        }
    }

    /// The status and body once the whole response is in `bytes`; nil while more is due.
    static func parse(_ bytes: [UInt8], ended: Bool) throws -> (status: Int, body: String)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.firstRange(of: separator) else {
            if ended { throw FakeTelegramDeliveryError.malformedResponse(String(decoding: bytes.prefix(200), as: UTF8.self)) }
            return nil
        }
        let lines = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw FakeTelegramDeliveryError.malformedResponse(lines.first ?? "")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let rest = Array(bytes[headEnd.upperBound...])
        if let length = fields["content-length"].flatMap({ Int($0) }) {
            guard rest.count >= length else { return ended ? (status, String(decoding: rest, as: UTF8.self)) : nil }
            return (status, String(decoding: rest.prefix(length), as: UTF8.self))
        }
        if fields["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            var index = 0
            while let lineEnd = rest[index...].firstRange(of: [13, 10]) {
                let sizeText = String(decoding: rest[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw FakeTelegramDeliveryError.malformedResponse("bad chunk size")
                }
                if size == 0 { return (status, String(decoding: body, as: UTF8.self)) }
                let start = lineEnd.upperBound
                guard rest.count >= start + size + 2 else { break }
                body += rest[start..<(start + size)]
                index = start + size + 2
            }
            return ended ? (status, String(decoding: body, as: UTF8.self)) : nil
        }
        // No length: the body runs to the end of the connection (or is empty for 204/304).
        if status == 204 || status == 304 { return (status, "") }
        return ended ? (status, String(decoding: rest, as: UTF8.self)) : nil
    }
}

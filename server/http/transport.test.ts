import { describe, expect, it } from 'vitest';
import { formatAddress, isLoopbackAddress, isTransportSecure } from './transport.js';

describe('isLoopbackAddress (D7)', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '0000:0000:0000:0000:0000:0000:0000:0001',
    '::ffff:127.0.0.1',
    '0000:0000:0000:0000:0000:ffff:7f00:0001',
    '::FFFF:7F01:0203',
  ])('%s is loopback', (address) => expect(isLoopbackAddress(address)).toBe(true));

  it.each([
    '10.0.0.1',
    '128.0.0.1',
    '::2',
    '::',
    '0000:0000:0000:0000:0000:ffff:0a00:0001',
    '::ffff:10.0.0.1',
    'fe80::1',
    '1::1::1',
    'not an address',
    '::ffff:127.0.0.256',
  ])('%s is not loopback', (address) => expect(isLoopbackAddress(address)).toBe(false));
});

describe('formatAddress', () => {
  it('shows IPv4-mapped addresses as IPv4 and compresses IPv6', () => {
    expect(formatAddress('0000:0000:0000:0000:0000:ffff:7f00:0001')).toBe('127.0.0.1');
    expect(formatAddress('0000:0000:0000:0000:0000:0000:0000:0001')).toBe('::1');
    expect(formatAddress('2001:0db8:0000:0000:0001:0000:0000:0001')).toBe('2001:db8::1:0:0:1');
    expect(formatAddress('192.168.1.9')).toBe('192.168.1.9');
  });
});

describe('isTransportSecure (D7)', () => {
  const remote = { address: '10.0.0.1', loopback: false };
  const local = { address: '127.0.0.1', loopback: true };
  it('is secure over TLS whatever the peer', () => expect(isTransportSecure(true, false, remote, undefined)).toBe(true));
  it('is secure from a loopback peer over plain HTTP', () => expect(isTransportSecure(false, false, local, undefined)).toBe(true));
  it('is not secure from a remote peer over plain HTTP', () => expect(isTransportSecure(false, false, remote, undefined)).toBe(false));
  it('ignores X-Forwarded-Proto without trust-proxy', () => expect(isTransportSecure(false, false, remote, 'https')).toBe(false));
  it('believes X-Forwarded-Proto: https with trust-proxy (any case)', () => {
    expect(isTransportSecure(false, true, remote, 'HTTPS')).toBe(true);
    expect(isTransportSecure(false, true, remote, ' https ')).toBe(true);
  });
  it('with trust-proxy, the last value of an X-Forwarded-Proto list decides: the nearest proxy set it (D46)', () => {
    expect(isTransportSecure(false, true, remote, 'https, http')).toBe(false);
    expect(isTransportSecure(false, true, local, 'https, http')).toBe(false);
    expect(isTransportSecure(false, true, remote, 'http, https')).toBe(true);
    expect(isTransportSecure(false, true, remote, 'http,https')).toBe(true);
    expect(isTransportSecure(false, true, remote, 'http, http, https')).toBe(true);
    expect(isTransportSecure(false, true, remote, 'https, https, http')).toBe(false);
  });
  it('with trust-proxy, X-Forwarded-Proto: http is not secure even from a loopback proxy', () => {
    expect(isTransportSecure(false, true, local, 'http')).toBe(false);
  });
});

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/**
 * The app's private key as the host issues it (PEM, PKCS#1 or PKCS#8); null when it is not an
 * RSA private key, which the admin is told when saving it rather than at the first connect.
 */
export function appPrivateKey(pem: string): KeyObject | null {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'rsa' ? key : null;
  } catch {
    return null;
  }
}

/**
 * The app's own short JWT (RS256, issuer the app id), which the host takes only to mint
 * installation tokens: issued a minute in the past for clock skew, valid nine minutes (the host
 * refuses more than ten).
 */
export function appJwt(appId: string, key: KeyObject, now: Date): Promise<string> {
  const seconds = Math.floor(now.getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(appId)
    .setIssuedAt(seconds - 60)
    .setExpirationTime(seconds + 9 * 60)
    .sign(key);
}

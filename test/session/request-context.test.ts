import { checkOnBehalfOf, checkSignerPlace, documentNameFor } from '../../src/session';

describe('request context', () => {
  const acme = { uen: '202612345K', entityName: 'Acme Widgets Pte Ltd', role: 'Director', eserviceId: 'SIGN-DOCS' };

  it('keeps a checked company and role', () => {
    expect(checkOnBehalfOf(acme)).toEqual(acme);
    expect(checkOnBehalfOf(undefined)).toBeUndefined();
    expect(() => checkOnBehalfOf({ ...acme, uen: '2026 12345K' })).toThrow(/onBehalfOf.uen/);
    expect(() => checkOnBehalfOf({ ...acme, role: '' })).toThrow(/onBehalfOf.role/);
    expect(() => checkOnBehalfOf({ ...acme, entityName: 'Acme\u202Egnp.exe' })).toThrow(/onBehalfOf.entityName/);
    expect(() => checkOnBehalfOf({ ...acme, eserviceId: 'x'.repeat(26) })).toThrow(/onBehalfOf.eserviceId/);
  });

  it('checks a signer place: in range, and a later signer names the session before', () => {
    expect(checkSignerPlace({ position: 1, of: 2, label: 'Landlord' })).toEqual({ position: 1, of: 2, label: 'Landlord' });
    expect(checkSignerPlace({ position: 2, of: 2, previousSignRef: 'ref-1' })).toEqual({ position: 2, of: 2, previousSignRef: 'ref-1' });
    expect(() => checkSignerPlace({ position: 3, of: 2, previousSignRef: 'r' })).toThrow(/signer.position/);
    expect(() => checkSignerPlace({ position: 2, of: 2 })).toThrow(/signer.previousSignRef/);
    expect(() => checkSignerPlace({ position: 0, of: 2 })).toThrow(/signer.position/);
    expect(() => checkSignerPlace({ position: 1.5, of: 2 })).toThrow(/signer.position/);
  });

  it('names the company and role in the document name the user sees, within the spec\'s 255 characters', () => {
    expect(documentNameFor('Lease.pdf', acme)).toBe('Lease.pdf — for Acme Widgets Pte Ltd (202612345K) as Director');
    expect(documentNameFor('Lease.pdf')).toBe('Lease.pdf');
    const long = documentNameFor('x'.repeat(250), acme);
    expect(long.length).toBeLessThanOrEqual(255);
    expect(long.endsWith('— for Acme Widgets Pte Ltd (202612345K) as Director')).toBe(true);
  });
});

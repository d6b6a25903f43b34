/**
 * Test users of the sandbox login providers. Choose one headlessly with `sandbox_user=<id>` on the authorization
 * URL or the `X-Sandbox-User` header; without either, the first user of the list is used.
 * All identities are fictitious.
 */

// ---- Corppass --------------------------------------------------------------------------------------------------

export interface CorppassAuthRow {
  CPEntID_SUB: string;
  CPRole: string;
  StartDate: string;
  EndDate: string;
  Parameter: Array<{ name: string; value: string }>;
}

export interface CorppassUser {
  id: string;
  /** ID token `sub`, key=value pairs (fields vary: a foreign user has no `s=`). */
  sub: string;
  amr: string[];
  userInfo: { CPAccType: string; CPUID_FullName: string; ISSPHOLDER: 'YES' | 'NO' };
  entityInfo: Record<string, string>;
  /** e-service id → rows */
  authInfo: Record<string, CorppassAuthRow[]>;
  /** e-service id → third-party client entities */
  tpAuthInfo: Record<string, Array<{ CP_Clnt_ID: string; CP_ClntEnt_TYPE: 'UEN' | 'NON-UEN'; rows: Array<Omit<CorppassAuthRow, 'CPEntID_SUB'> & { CP_ClntEnt_SUB: string }> }>>;
}

const OPEN = '9999-12-31';

export const CORPPASS_USERS: readonly CorppassUser[] = [
  {
    id: 'cp-admin',
    sub: 's=S1234567A,uuid=3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b,u=CP192,c=SG',
    amr: ['pwd', 'swk'],
    userInfo: { CPAccType: 'Admin', CPUID_FullName: 'TAN AH KOW', ISSPHOLDER: 'YES' },
    entityInfo: { CPEntID: '201500001A', CPEnt_TYPE: 'UEN', CPEnt_Status: 'Registered', CPNonUEN_Country: '', CPNonUEN_RegNo: '', CPNonUEN_Name: '' },
    authInfo: {
      'SD-CPF2FA': [
        { CPEntID_SUB: '', CPRole: 'CPF2FAR1', StartDate: '2023-01-01', EndDate: OPEN, Parameter: [] },
        { CPEntID_SUB: '', CPRole: 'CPF2FAR2', StartDate: '2019-04-01', EndDate: '2021-03-31', Parameter: [] }, // expired
      ],
      'SD-GSTFILE': [
        {
          CPEntID_SUB: 'BR-0001',
          CPRole: 'Preparer',
          StartDate: '2022-07-01',
          EndDate: OPEN,
          Parameter: [
            { name: 'Tax Type', value: 'GST' },
            { name: 'Branch', value: 'Main' },
          ],
        },
        { CPEntID_SUB: '', CPRole: 'Approver', StartDate: '2099-01-01', EndDate: OPEN, Parameter: [] }, // not yet active
      ],
      'SD-PERMITS': [{ CPEntID_SUB: '', CPRole: 'Viewer', StartDate: '2024-01-15', EndDate: '2098-12-31', Parameter: [{ name: 'Region', value: 'East' }] }],
    },
    tpAuthInfo: {
      'SD-GSTFILE': [
        {
          CP_Clnt_ID: '199912345K',
          CP_ClntEnt_TYPE: 'UEN',
          rows: [
            { CP_ClntEnt_SUB: '', CPRole: 'Preparer', StartDate: '2023-05-01', EndDate: OPEN, Parameter: [{ name: 'Tax Type', value: 'GST' }] },
            { CP_ClntEnt_SUB: 'BR-02', CPRole: 'Approver', StartDate: '2018-01-01', EndDate: '2020-12-31', Parameter: [] },
          ],
        },
        {
          CP_Clnt_ID: 'F-MY-0042731',
          CP_ClntEnt_TYPE: 'NON-UEN',
          rows: [{ CP_ClntEnt_SUB: '', CPRole: 'Preparer', StartDate: '2024-02-01', EndDate: '2099-12-31', Parameter: [] }],
        },
      ],
    },
  },
  {
    id: 'cp-fin',
    // M-series FIN (issued from 2022): helpers that regex-match [STFG] broke on these.
    sub: 's=M1234567K,uuid=8a4b2c6d-1e3f-4a5b-9c7d-0e1f2a3b4c5d,u=CP193,c=SG',
    amr: ['pwd', 'otp-sms'],
    userInfo: { CPAccType: 'User', CPUID_FullName: 'RAJESH KUMAR S/O MURUGAN', ISSPHOLDER: 'YES' },
    entityInfo: { CPEntID: '201500001A', CPEnt_TYPE: 'UEN', CPEnt_Status: 'Registered', CPNonUEN_Country: '', CPNonUEN_RegNo: '', CPNonUEN_Name: '' },
    authInfo: {
      'SD-CPF2FA': [{ CPEntID_SUB: '', CPRole: 'CPF2FAR1', StartDate: '2024-03-01', EndDate: OPEN, Parameter: [] }],
    },
    tpAuthInfo: {},
  },
  {
    id: 'cp-foreign',
    // Foreign user of a non-UEN entity: no NRIC/FIN, so no `s=` field.
    sub: 'uuid=c0ffee00-1234-4abc-8def-0123456789ab,u=CP194,c=MY',
    amr: ['pwd', 'otp-email'],
    userInfo: { CPAccType: 'User', CPUID_FullName: 'NUR AISYAH BINTI AHMAD', ISSPHOLDER: 'NO' },
    entityInfo: { CPEntID: 'F-MY-0042731', CPEnt_TYPE: 'NON-UEN', CPEnt_Status: 'Registered', CPNonUEN_Country: 'MY', CPNonUEN_RegNo: '0042731-X', CPNonUEN_Name: 'SYARIKAT CONTOH SDN BHD' },
    authInfo: {
      'SD-PERMITS': [{ CPEntID_SUB: '', CPRole: 'Applicant', StartDate: '2025-01-01', EndDate: OPEN, Parameter: [] }],
    },
    tpAuthInfo: {},
  },
];

/** Build `AuthInfo` / `TPAuthInfo` in the wire shape of the spec (§2.2). */
export function corppassAuthorization(user: CorppassUser): { AuthInfo: unknown; TPAuthInfo: unknown } {
  const esrv = Object.entries(user.authInfo).map(([CPESrvcID, rows]) => ({
    CPESrvcID,
    Auth_Result_Set: { Row_Count: rows.length, Row: rows },
  }));
  const tp = Object.entries(user.tpAuthInfo).map(([CPESrvcID, clients]) => ({
    CPESrvcID,
    Auth_Set: {
      ENT_ROW_COUNT: clients.length,
      TP_Auth: clients.map((c) => ({
        CP_Clnt_ID: c.CP_Clnt_ID,
        CP_ClntEnt_TYPE: c.CP_ClntEnt_TYPE,
        Auth_Result_Set: { Row_Count: c.rows.length, Row: c.rows },
      })),
    },
  }));
  return {
    AuthInfo: { Result_Set: { ESrvc_Row_Count: esrv.length, ESrvc_Result: esrv } },
    TPAuthInfo: { Result_Set: { ESrvc_Row_Count: tp.length, ESrvc_Result: tp } },
  };
}

// ---- Singpass ---------------------------------------------------------------------------------------------------

export interface SingpassUser {
  id: string;
  uuid: string;
  accountType: 'standard' | 'foreign';
  identityNumber: string;
  identityCoi: string;
  acr: string;
  /** Includes OLD values (`sms`, `fv`) for some users: clients must map them. */
  amr: string[];
  /** Myinfo-style attributes (value only; metadata added when served). */
  person: Record<string, string>;
}

export const SINGPASS_USERS: readonly SingpassUser[] = [
  {
    id: 'citizen',
    uuid: 'b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f',
    accountType: 'standard',
    identityNumber: 'S8979373D',
    identityCoi: 'SG',
    acr: 'urn:singpass:authentication:loa:2',
    amr: ['pwd', 'otp-sms'],
    person: { uinfin: 'S8979373D', name: 'TAN XIAO HUI', sex: 'F', dob: '1988-10-06', nationality: 'SG', residentialstatus: 'C', email: 'xiaohui.tan@example.sg', mobileno: '+6597399245' },
  },
  {
    id: 'pr',
    uuid: '0d3e5f7a-9b1c-4d2e-8f3a-4b5c6d7e8f90',
    accountType: 'standard',
    identityNumber: 'S2700056G',
    identityCoi: 'SG',
    acr: 'urn:singpass:authentication:loa:2',
    amr: ['swk'],
    person: { uinfin: 'S2700056G', name: 'LIM WEI MING', sex: 'M', dob: '1979-02-14', nationality: 'MY', residentialstatus: 'P', email: 'weiming.lim@example.sg', mobileno: '+6591234567' },
  },
  {
    id: 'fin-m',
    uuid: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
    accountType: 'standard',
    identityNumber: 'M1234567K',
    identityCoi: 'SG',
    acr: 'urn:singpass:authentication:loa:3',
    amr: ['pwd', 'otp-sms', 'face'],
    person: { uinfin: 'M1234567K', name: 'PRIYA RAMASAMY', sex: 'F', dob: '1995-07-30', nationality: 'IN', residentialstatus: 'A', email: 'priya.r@example.sg', mobileno: '+6588765432' },
  },
  {
    id: 'foreign',
    uuid: 'f0e1d2c3-b4a5-4968-8776-655443322110',
    accountType: 'foreign',
    identityNumber: 'X98765432',
    identityCoi: 'US',
    acr: 'urn:singpass:authentication:loa:2',
    amr: ['pwd', 'sms'], // OLD value: sms → otp-sms
    person: { name: 'JOHN DOE', sex: 'M', dob: '1985-01-01', nationality: 'US', email: 'john.doe@example.com' },
  },
  {
    id: 'legacy-face',
    uuid: '11223344-5566-4778-8899-aabbccddeeff',
    accountType: 'standard',
    identityNumber: 'T0123456G',
    identityCoi: 'SG',
    acr: 'urn:singpass:authentication:loa:3',
    amr: ['swk', 'fv'], // OLD value: fv → face
    person: { uinfin: 'T0123456G', name: 'NG MEI LING', sex: 'F', dob: '2001-12-12', nationality: 'SG', residentialstatus: 'C', email: 'meiling.ng@example.sg', mobileno: '+6581112222' },
  },
];

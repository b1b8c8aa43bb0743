import { CreateWizard } from '../components/create/CreateWizard';

export default function CreatePage() {
  return <CreateWizard />;
}

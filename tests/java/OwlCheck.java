// Loads an RDF file with the OWLAPI bundled in owlready2's HermiT.jar; prints its ontology id, every ontology the
// manager holds, OWL 2 DL profile violations and HermiT's consistency verdict, one "key<TAB>value" per line.
import java.io.File;
import org.semanticweb.HermiT.Reasoner;
import org.semanticweb.owlapi.apibinding.OWLManager;
import org.semanticweb.owlapi.model.OWLOntology;
import org.semanticweb.owlapi.model.OWLOntologyManager;
import org.semanticweb.owlapi.profiles.OWL2DLProfile;
import org.semanticweb.owlapi.profiles.OWLProfileViolation;

public class OwlCheck {
    public static void main(String[] args) throws Exception {
        OWLOntologyManager manager = OWLManager.createOWLOntologyManager();
        OWLOntology ontology = manager.loadOntologyFromOntologyDocument(new File(args[0]));
        System.out.println("iri\t" + ontology.getOntologyID().getOntologyIRI());
        System.out.println("version\t" + ontology.getOntologyID().getVersionIRI());
        for (OWLOntology o : manager.getOntologies()) System.out.println("ontology\t" + o.getOntologyID());
        System.out.println("axioms\t" + ontology.getLogicalAxiomCount());
        for (OWLProfileViolation v : new OWL2DLProfile().checkOntology(ontology).getViolations())
            System.out.println("violation\t" + v.toString().replace('\n', ' '));
        System.out.println("consistent\t" + new Reasoner(ontology).isConsistent());
    }
}
